// The page: one EventSource per open run, folded by reducer.js; live controls are POSTs.
import { html, render, useState, useEffect, useRef, useLayoutEffect, useMemo } from './vendor/preact-htm.js';
import { BUSY, apply, bestSoFar, decision, finalReason, foldTo, initial, seqsOf } from './reducer.js';
import { markdown, wordDiff } from './text.js';

const api = (path) => `/ui/api${path}`;
const fmt = (n) => (n >= 10000 ? `${(n / 1000).toFixed(1)}k` : String(n));
const money = (c) => `$${c.toFixed(4)}`;
const secs = (s) => (s == null ? '–' : `${s.toFixed(1)} s`);
// What tests read: every seq received, duplicates and gaps, reconnects.
const stats = { received: 0, dupes: 0, missing: null, reconnects: 0, end: null };
window.__mgStats = stats;

async function post(path, body = {}) {
  const res = await fetch(api(path), { method: 'POST', headers: { 'content-type': 'application/json' },
                                       body: JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((data.error && data.error.message) || `HTTP ${res.status}`);
  return data;
}

// One run's stream: entries in seq order, each seq exactly once, whatever reconnects happen.
function useRunStream(runId) {
  const [feed, setFeed] = useState({ entries: [], state: initial(), conn: 'connecting', end: null });
  useEffect(() => {
    if (!runId) return undefined;
    const seen = new Set();
    let entries = [];
    let state = initial();
    let conn = 'connecting';
    let end = null;
    let opened = 0;
    Object.assign(stats, { received: 0, dupes: 0, missing: null, reconnects: 0, end: null });
    const publish = () => setFeed({ entries, state, conn, end });
    const es = new EventSource(api(`/runs/${encodeURIComponent(runId)}/events`));
    es.onopen = () => { opened += 1; stats.reconnects = opened - 1; conn = 'live'; publish(); };
    es.onerror = () => { if (!end) { conn = es.readyState === 2 ? 'closed' : 'reconnecting'; publish(); } };
    es.addEventListener('records', (ev) => {
      const fresh = [];
      for (const e of JSON.parse(ev.data).records) {
        const seqs = seqsOf(e);
        if (seqs.some((q) => seen.has(q))) { stats.dupes += 1; continue; }
        seqs.forEach((q) => seen.add(q));
        stats.received += seqs.length;
        fresh.push(e);
      }
      if (!fresh.length) return;
      entries = entries.concat(fresh);
      for (const e of fresh) state = apply(state, e);
      publish();
    });
    es.addEventListener('end', (ev) => {
      end = JSON.parse(ev.data);
      es.close();
      let missing = 0;
      for (let q = 1; q <= end.last_seq; q++) if (!seen.has(q)) missing += 1;
      Object.assign(stats, { missing, end });
      conn = 'ended';
      publish();
    });
    return () => es.close();
  }, [runId]);
  return feed;
}

function Chip({ kind, children, title }) {
  return html`<span class=${`chip chip-${kind}`} title=${title || ''}>${children}</span>`;
}

function Header({ s, conn, live, now }) {
  const elapsed = s.firstTs == null ? null : (live && s.phase !== 'finished' ? now : s.lastTs) - s.firstTs;
  const budget = s.budget || {};
  return html`<header class="run-header" data-testid="run-header">
    <div class="question">${s.question || '…'}</div>
    <div class="facts">
      <${Chip} kind=${s.phase}>${s.phase}</${Chip}>
      <span>round <b data-testid="round">${s.round}</b></span>
      <span>elapsed <b>${secs(elapsed)}</b>${s.deadlineS ? html` / ${s.deadlineS} s` : ''}</span>
      <span>tokens <b>${fmt(s.totals.inTok)}</b> in, <b>${fmt(s.totals.outTok)}</b> out${
        budget.max_tokens ? html` (<b>${fmt(s.totals.inTok + s.totals.outTok)}</b> / ${fmt(budget.max_tokens)})` : ''}</span>
      <span>calls <b>${s.totals.calls}</b>${budget.max_model_calls ? html` / ${budget.max_model_calls}` : ''}</span>
      <span>cost <b>${money(s.totals.cost)}</b></span>
      <span>seq <b data-testid="seq">${s.seq}</b></span>
      <${Chip} kind=${`conn-${conn}`}><span data-testid="conn">${conn}</span></${Chip}>
    </div>
    <${Tally} s=${s} />
  </header>`;
}

// The round's tally and what the judge decided, in the header: in view without scrolling, as the terminal
// shows its votes box beside the panels.
function Tally({ s }) {
  if (!s.tally) return null;
  return html`<div class="tally" data-testid="tally">tally: ${Object.entries(s.tally.counts).map(
    ([agent, n]) => `${(s.agents[agent] || {}).label || agent} ${n}`).join(', ') || 'no vote counts yet'}${
    decision(s) ? ` · ${decision(s)}` : ''}</div>`;
}

const SPINNER = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';

// A sign of life while an agent works, as the terminal's panel shows it: a spinner, how long its model
// call has been out (or how long it has been in its current state between calls).
function Alive({ a, now }) {
  if (!BUSY.has(a.status) || now == null) return null;
  const from = a.callingSince ?? a.since;
  if (from == null) return null;
  const waited = Math.max(0, Math.floor(now - from));
  const what = a.callingSince != null ? 'model working' : a.status;
  return html`<span class="alive" data-testid=${`alive-${a.id}`}>${SPINNER[Math.floor(now * 4) % SPINNER.length]} ${what} ${waited}s</span>`;
}

// An answer in its lane: the first few lines, and all of it on request.
function Collapsible({ text, testid }) {
  const box = useRef(null);
  const [open, setOpen] = useState(false);
  const [long, setLong] = useState(false);
  useLayoutEffect(() => { if (box.current && !open) setLong(box.current.scrollHeight > box.current.clientHeight + 1); }, [text, open]);
  return html`<div class="answer-box" data-testid=${testid}>
    <div class=${`answer-text ${open ? '' : 'clamped'}`} ref=${box}>${text}</div>
    ${(long || open) && html`<button class="more" data-testid=${`${testid}-more`} onClick=${() => setOpen(!open)}>
      ${open ? 'show less' : 'show all'}</button>`}</div>`;
}

function Outcome({ t }) {
  if (t.answer) {
    return html`<div class="outcome">→ answered ${t.answer.label}</div>
      <${Collapsible} text=${t.answer.content} testid=${`answer-${t.answer.label}`} />`;
  }
  if (t.vote) {
    return html`<div class="outcome">→ voted for ${t.vote.target}</div>
      <div class="vote-reason" data-testid="vote-reason">${t.vote.reason}</div>`;
  }
  return t.outcome ? html`<div class="outcome">→ ${t.outcome}</div>` : null;
}

// Turns are numbered per agent (its first turn is turn 1); the trace's turn id is the tooltip.
function Turn({ t, n }) {
  const name = t.kind === 'final presentation' ? t.kind : `${t.kind} ${n}`;
  return html`<div class="turn">
    <div class="turn-head" title=${`turn_id ${t.id} in the trace`}>${name}${t.view.length ? html` · saw ${t.view.join(', ')}` : ''}</div>
    ${t.reasoning && html`<div class="reasoning">${t.reasoning}</div>`}
    ${t.text && html`<div class="text">${t.text}</div>`}
    ${t.tools.map((c) => html`<div class=${`tool ${c.error ? 'tool-error' : ''}`}>
      <div class="tool-name">⚙ ${c.name}</div><code>${JSON.stringify(c.args)}</code>
      ${c.result != null && html`<div class="tool-result">${c.result}</div>`}</div>`)}
    <${Outcome} t=${t} />
  </div>`;
}

// Follows the tail while the reader is at the bottom; scrolling up holds the view.
function Lane({ a, live, runId, pick, now }) {
  const body = useRef(null);
  const follow = useRef(true);
  const [paused, setPaused] = useState(false);
  useLayoutEffect(() => { if (follow.current && body.current) body.current.scrollTop = body.current.scrollHeight; });
  const onScroll = () => {
    const el = body.current;
    const atEnd = el.scrollHeight - el.scrollTop - el.clientHeight < 8;
    follow.current = atEnd;
    if (paused === atEnd) setPaused(!atEnd);
  };
  const resume = () => { follow.current = true; setPaused(false); body.current.scrollTop = body.current.scrollHeight; };
  const act = (verb) => post(`/runs/${encodeURIComponent(runId)}/agents/${encodeURIComponent(a.id)}/${verb}`).catch(alert);
  return html`<section class="lane" data-testid=${`lane-${a.id}`}>
    <div class="lane-head">
      <b>${a.label}</b> <span class="muted">${a.id}#${a.incarnation}</span>
      <${Chip} kind=${a.status}><span data-testid=${`status-${a.id}`}>${a.status}</span></${Chip}>
      ${live && html`<${Alive} a=${a} now=${now} />`}
      ${live && html`<span class="lane-actions">
        <button data-testid=${`kill-${a.id}`} onClick=${() => act('kill')}>kill</button>
        <button data-testid=${`restart-${a.id}`} onClick=${() => act('restart')}>restart</button></span>`}
    </div>
    <div class="lane-meta">${fmt(a.inTok)} in · ${fmt(a.outTok)} out · ${a.calls} ${a.calls === 1 ? 'call' : 'calls'} · ${money(a.cost)}
      ${a.answers.map((l) => html` <button class="version" onClick=${() => pick(l)}>${l}</button>`)}
      ${a.votedFor && html` <span class="muted">voted ${a.votedFor}</span>`}</div>
    ${a.error && html`<div class="error">${a.error}</div>`}
    <div class="lane-body" ref=${body} onScroll=${onScroll} data-testid=${`lane-body-${a.id}`}>
      ${a.turns.map((t, i) => html`<${Turn} key=${t.id} t=${t} n=${i + 1} />`)}
    </div>
    ${paused && html`<button class="follow" onClick=${resume}>↓ follow</button>`}
  </section>`;
}

function Timeline({ s }) {
  return html`<section class="panel timeline" data-testid="timeline"><h3>Timeline</h3>
    <ol>${s.timeline.map((t) => html`<li class=${`tl tl-${t.kind} ${t.struck ? 'struck' : ''}`} key=${t.seq}>
      <span class="seqno">#${t.seq}</span> <span class="muted">${(t.ts - s.firstTs).toFixed(2)}s</span>
      <span class="tl-text">${t.text}</span>
      ${t.refs && t.refs.length ? html`<span class="refs">${t.refs.map((r) => html`<span class="ref">↖ ${r}</span>`)}</span>` : ''}
    </li>`)}</ol></section>`;
}

// Answers and votes by agent (rows) in trace order (columns); dashed arrows: the answers each one
// saw (from trace causation); solid: a vote's target. A vote that no longer counts is struck.
function Graph({ s }) {
  const items = [...s.answerOrder.map((l) => ({ kind: 'answer', ...s.answers[l] })),
                 ...s.votes.map((v) => ({ kind: 'vote', agent: v.voter, ...v }))].sort((a, b) => a.seq - b.seq);
  if (!items.length) return null;
  const row = Object.fromEntries(s.order.map((a, i) => [a, i]));
  const at = {};
  const X = (i) => 90 + i * 64;
  const Y = (agent) => 22 + (row[agent] ?? 0) * 34;
  items.forEach((it, i) => { if (it.kind === 'answer') at[it.label] = [X(i), Y(it.agent)]; });
  const width = X(items.length) + 20;
  const height = 22 + s.order.length * 34;
  const edges = [];
  items.forEach((it, i) => {
    const [x, y] = [X(i), Y(it.agent)];
    for (const l of it.saw || []) if (at[l] && l !== it.targetLabel) edges.push(html`<line class="saw" x1=${at[l][0]} y1=${at[l][1]} x2=${x} y2=${y} />`);
    if (it.kind === 'vote' && at[it.targetLabel]) {
      edges.push(html`<line class=${it.valid ? 'target' : 'target struck-line'} x1=${x} y1=${y} x2=${at[it.targetLabel][0]} y2=${at[it.targetLabel][1]} marker-end="url(#arrow)" />`);
    }
  });
  return html`<section class="panel graph" data-testid="graph"><h3>Coordination</h3><div class="graph-scroll">
    <svg width=${width} height=${height}>
      <defs><marker id="arrow" viewBox="0 0 10 10" refX="16" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
        <path d="M 0 0 L 10 5 L 0 10 z" /></marker></defs>
      ${s.order.map((a) => html`<text class="row-label" x="4" y=${Y(a) + 4}>${s.agents[a].label}</text>`)}
      ${edges}
      ${items.map((it, i) => (it.kind === 'answer'
        ? html`<g class="node answer"><circle cx=${X(i)} cy=${Y(it.agent)} r="11" /><text x=${X(i)} y=${Y(it.agent) + 4}>${it.label.replace('agent', '')}</text><title>${it.label}: ${it.content}</title></g>`
        : html`<g class=${`node vote ${it.valid ? '' : 'struck'}`}><rect x=${X(i) - 8} y=${Y(it.agent) - 8} width="16" height="16" /><text x=${X(i)} y=${Y(it.agent) + 4}>v</text><title>${it.voterLabel} → ${it.targetLabel}: ${it.reason}</title></g>`))}
    </svg></div></section>`;
}

function Votes({ s }) {
  return html`<section class="panel" data-testid="votes"><h3>Votes</h3>
    <table><tbody>${s.votes.map((v) => html`<tr class=${v.valid ? 'vote' : 'vote struck'} key=${v.seq}>
      <td>${v.voterLabel}</td><td>→ <b>${v.targetLabel}</b></td><td class="reason">${v.reason}</td><td class="muted">r${v.round}</td>
    </tr>`)}</tbody></table></section>`;
}

function Final({ s }) {
  if (!s.final) return null;
  const f = s.final;
  return html`<section class="panel final" data-testid="final"><h3>Final answer
      ${bestSoFar(s) && html` <${Chip} kind="partial"><span data-testid="best-so-far">best so far</span></${Chip}>`}</h3>
    <div class="muted" data-testid="final-status">${f.status}: ${finalReason(s)}${f.winner_label ? ` · from ${f.winner_label}` : ''}${
      s.answerNow ? ' · after answer now' : ''}</div>
    ${f.presentation_not_used && html`<div class="notice" data-testid="final-presentation-not-used">The winning answer as
      written, not its presentation: ${f.presentation_not_used}</div>`}
    <div data-testid="final-answer">${f.final_answer == null ? html`<i>no answer</i>` : markdown(f.final_answer)}</div>
  </section>`;
}

function Diff({ s, picked }) {
  const labels = s.answerOrder;
  const [left, setLeft] = useState('');
  const [right, setRight] = useState('');
  useEffect(() => { if (picked) { setLeft(right || labels[0] || ''); setRight(picked); } }, [picked]);
  const a = s.answers[left]; const b = s.answers[right];
  const pieces = useMemo(() => (a && b ? wordDiff(a.content, b.content) : []), [a, b]);
  if (!labels.length) return null;
  const sel = (v, set) => html`<select value=${v} onChange=${(ev) => set(ev.target.value)}>
    <option value="">–</option>${labels.map((l) => html`<option value=${l}>${l}</option>`)}</select>`;
  const side = (keep) => pieces.filter(([op]) => op === 'same' || op === keep).map(([op, t]) => html`<span class=${op}>${t}</span>`);
  return html`<section class="panel" data-testid="diff"><h3>Compare answers ${sel(left, setLeft)} ${sel(right, setRight)}</h3>
    <div class="diff-cols"><div class="diff">${side('del')}</div><div class="diff">${side('ins')}</div></div></section>`;
}

function Notes({ s }) {
  const notes = Object.values(s.notes);
  if (!notes.length) return null;
  return html`<section class="panel" data-testid="notes"><h3>Notes</h3>${notes.map((n) => html`<div class="note-row">
    “${n.text}” → ${n.to.map((a) => html`<span class=${n.delivered[a] ? 'ok' : 'muted'}>${(s.agents[a] || {}).label || a} ${n.delivered[a] ? `✓ #${n.delivered[a]}` : '…'} </span>`)}
  </div>`)}</section>`;
}

function Inspector({ entries, limit }) {
  const [type, setType] = useState('');
  const [sender, setSender] = useState('');
  const [from, setFrom] = useState('');
  const rows = entries.filter((e) => e.seq <= limit && (!type || e.type.toLowerCase().includes(type.toLowerCase()))
    && (!sender || String(e.sender).includes(sender)) && (!from || e.seq >= Number(from)));
  return html`<section class="panel inspector" data-testid="inspector"><h3>Events
    <input placeholder="type" value=${type} onInput=${(ev) => setType(ev.target.value)} data-testid="filter-type" />
    <input placeholder="sender" value=${sender} onInput=${(ev) => setSender(ev.target.value)} />
    <input placeholder="from seq" value=${from} size="6" onInput=${(ev) => setFrom(ev.target.value)} />
    <span class="muted">${rows.length} shown</span></h3>
    <div class="events">${rows.slice(-300).map((e) => html`<details key=${e.seq}><summary>
      #${e.seq}${e.last_seq && e.last_seq !== e.seq ? `–${e.last_seq}` : ''} ${e.kind} <b>${e.type}</b> ${e.sender} → ${e.to || '·'}</summary>
      <pre>${JSON.stringify(e, null, 1)}</pre></details>`)}</div></section>`;
}

function Controls({ runId, s }) {
  const [text, setText] = useState('');
  const [to, setTo] = useState('');
  const id = encodeURIComponent(runId);
  const send = () => { if (text.trim()) post(`/runs/${id}/notes`, { text, agent: to || null }).then(() => setText('')).catch(alert); };
  return html`<div class="controls" data-testid="controls">
    <button data-testid="cancel" onClick=${() => post(`/runs/${id}/cancel`).catch(alert)}>cancel</button>
    <button data-testid="answer-now" onClick=${() => post(`/runs/${id}/answer_now`).catch(alert)}>answer now</button>
    <input data-testid="note-text" placeholder="a note for the agents" value=${text} onInput=${(ev) => setText(ev.target.value)} />
    <select data-testid="note-to" value=${to} onChange=${(ev) => setTo(ev.target.value)}>
      <option value="">all agents</option>${s.order.map((a) => html`<option value=${a}>${s.agents[a].label} (${a})</option>`)}
    </select>
    <button data-testid="send-note" onClick=${send}>send note</button>
  </div>`;
}

// Replay: pick any seq; play advances in trace time at the chosen speed.
function Scrubber({ entries, pos, setPos }) {
  const max = entries.length ? entries[entries.length - 1].last_seq || entries[entries.length - 1].seq : 0;
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(4);
  const [jump, setJump] = useState('');
  const at = pos ?? max;
  useEffect(() => {
    if (!playing) return undefined;
    const started = performance.now();
    const base = entries.find((e) => e.seq >= at) || entries[0];
    const t0 = base ? base.ts : 0;
    const timer = setInterval(() => {
      const t = t0 + ((performance.now() - started) / 1000) * speed;
      let next = at;
      for (const e of entries) { if (e.ts <= t) next = Math.max(next, e.last_seq || e.seq); else break; }
      if (next >= max) { setPlaying(false); setPos(null); } else setPos(next);
    }, 50);
    return () => clearInterval(timer);
  }, [playing, speed]);
  // Answers and votes in seq order. From the end (where a finished run opens) "next" starts over at the
  // first one; after the last one it goes to the end.
  const marks = useMemo(() => entries.filter((x) => x.type === 'AnswerAccepted'
    || (x.type === 'RecordVote' && x.kind === 'tell')).map((x) => x.seq), [entries]);
  const step = (forward) => {
    setPlaying(false);
    if (forward) {
      const next = at >= max ? marks[0] : marks.find((q) => q > at);
      setPos(next ?? null);
    } else {
      const before = marks.filter((q) => q < at);
      setPos(before.length ? before[before.length - 1] : 0);
    }
  };
  return html`<div class="scrubber" data-testid="scrubber">
    <button data-testid="play" onClick=${() => { if (at >= max) setPos(0); setPlaying(!playing); }}>${playing ? '❚❚' : '▶'}</button>
    <select value=${speed} onChange=${(ev) => setSpeed(Number(ev.target.value))}>
      ${[1, 4, 16, 64].map((v) => html`<option value=${v}>${v}×</option>`)}</select>
    <input type="range" min="0" max=${max} value=${at} onInput=${(ev) => setPos(Number(ev.target.value))} data-testid="scrub" />
    <button data-testid="step-back" onClick=${() => step(false)}>⇤ previous answer/vote</button>
    <button data-testid="step" onClick=${() => step(true)}>next answer/vote ⇥</button>
    <input data-testid="jump" size="6" placeholder="seq" value=${jump} onInput=${(ev) => setJump(ev.target.value)}
      onKeyDown=${(ev) => { if (ev.key === 'Enter' && jump) setPos(Math.min(max, Number(jump))); }} />
    <span class="muted">seq ${at} / ${max}</span>
  </div>`;
}

function RunView({ runId, ended }) {
  const feed = useRunStream(runId);
  useEffect(() => { if (feed.end) ended(); }, [feed.end]);
  const [pos, setPos] = useState(null);  // null: follow the newest record
  const [picked, setPicked] = useState(null);
  const [now, setNow] = useState(Date.now() / 1000);
  useEffect(() => { const t = setInterval(() => setNow(Date.now() / 1000), 250); return () => clearInterval(t); }, []);
  const s = useMemo(() => (pos == null ? feed.state : foldTo(feed.entries, pos)), [feed, pos]);
  const running = feed.conn !== 'ended' && s.phase !== 'finished';
  window.__mgState = s;  // what tests read: the state on screen
  return html`<div class="run" data-testid="run">
    <${Header} s=${s} conn=${pos == null ? feed.conn : 'replay'} live=${running} now=${now} />
    ${running ? html`<${Controls} runId=${runId} s=${s} />` : html`<${Scrubber} entries=${feed.entries} pos=${pos} setPos=${setPos} />`}
    <${Final} s=${s} />
    <div class="lanes">${s.order.map((id) => html`<${Lane} key=${id} a=${s.agents[id]} live=${running} runId=${runId} pick=${setPicked} now=${now} />`)}</div>
    <${Graph} s=${s} />
    <div class="grid">
      <div><${Votes} s=${s} /><${Notes} s=${s} /><${Diff} s=${s} picked=${picked} /></div>
      <${Timeline} s=${s} />
    </div>
    <${Inspector} entries=${feed.entries} limit=${pos ?? Infinity} />
  </div>`;
}

function Sidebar({ current, open, version }) {
  const [runs, setRuns] = useState([]);
  const [configs, setConfigs] = useState([]);
  const [question, setQuestion] = useState('');
  const [config, setConfig] = useState('');
  const load = () => fetch(api('/runs')).then((r) => r.json()).then((d) => { setRuns(d.runs || []); setConfigs(d.configs || []); setConfig((c) => c || (d.configs || [])[0] || ''); }).catch(() => {});
  useEffect(() => { load(); const t = setInterval(load, 3000); return () => clearInterval(t); }, [version]);
  const start = (ev) => {
    ev.preventDefault();
    post('/runs', { question, config: config || configs[0] }).then((d) => { setQuestion(''); open(d.id); load(); }).catch(alert);
  };
  return html`<aside class="sidebar"><div class="sidebar-inner">
    <form onSubmit=${start} data-testid="start-form">
      <textarea data-testid="question" placeholder="Ask the team…" value=${question} onInput=${(ev) => setQuestion(ev.target.value)} />
      <select data-testid="config" value=${config} onChange=${(ev) => setConfig(ev.target.value)}>
        ${configs.map((c) => html`<option value=${c}>${c}</option>`)}</select>
      <button type="submit" data-testid="start">start run</button>
    </form>
    <h3>Runs</h3>
    <ul class="runs" data-testid="runs">${runs.map((r) => html`<li key=${r.id} class=${r.id === current ? 'current' : ''}>
      <a href=${`?run=${encodeURIComponent(r.id)}`} data-run=${r.id} onClick=${(ev) => { ev.preventDefault(); open(r.id); }}>
        <${Chip} kind=${r.status}>${r.status}</${Chip}> ${r.question.slice(0, 80) || r.id}</a></li>`)}</ul>
  </div></aside>`;
}

function App() {
  const [runId, setRunId] = useState(new URLSearchParams(location.search).get('run'));
  const [listVersion, setListVersion] = useState(0);  // bumped when a run ends: the list reloads at once
  const open = (id) => { history.pushState(null, '', `?run=${encodeURIComponent(id)}`); setRunId(id); };
  useEffect(() => { const f = () => setRunId(new URLSearchParams(location.search).get('run')); addEventListener('popstate', f); return () => removeEventListener('popstate', f); }, []);
  const ended = () => setListVersion((v) => v + 1);
  return html`<div class="app"><${Sidebar} current=${runId} open=${open} version=${listVersion} />
    <main>${runId ? html`<${RunView} key=${runId} runId=${runId} ended=${ended} />` : html`<p class="muted">Start a run or pick one on the left.</p>`}</main></div>`;
}

render(html`<${App} />`, document.getElementById('app'));
