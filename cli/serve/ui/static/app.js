// The page: one event stream per open run (net.js), folded by reducer.js; live controls are POSTs.
import { html, render, h, Component, useState, useEffect, useRef, useLayoutEffect, useMemo } from './vendor/preact-htm.js';
import { BUSY, apply, bestSoFar, decision, finalReason, foldTo, initial, seqsOf } from './reducer.js';
import { CAP, breakable, clip, markdown, wordDiff } from './text.js';
import { RequestError, getJSON, post, readEvents, session, signIn, tokenFromUrl } from './net.js';

const fmt = (n) => (n >= 10000 ? `${(n / 1000).toFixed(1)}k` : String(n));
const count = (n) => n.toLocaleString('en-US');
const money = (c) => `$${c.toFixed(4)}`;
const secs = (s) => (s == null ? '–' : `${s.toFixed(1)} s`);
// What tests read: every seq received, duplicates and gaps, reconnects, and how often the run view rendered.
const stats = { received: 0, dupes: 0, missing: null, reconnects: 0, end: null };
window.__mgStats = stats;
window.__mgRenders = 0;

// A component that renders again only when one of its props changed (by identity): the reducer shares
// whatever a record did not touch, so a lane whose agent did nothing is skipped.
function pure(fn) {
  return class extends Component {
    shouldComponentUpdate(next) {
      for (const k in next) if (next[k] !== this.props[k]) return true;
      for (const k in this.props) if (!(k in next)) return true;
      return false;
    }

    render(props) { return h(fn, props); }
  };
}

// One clock for everything that shows elapsed time, ticking only while someone shows it.
const clock = { subscribers: new Set(), timer: 0 };
function useNow(active) {
  const [now, setNow] = useState(Date.now() / 1000);
  useEffect(() => {
    if (!active) return undefined;
    const tick = () => setNow(Date.now() / 1000);
    clock.subscribers.add(tick);
    if (!clock.timer) clock.timer = setInterval(() => clock.subscribers.forEach((f) => f()), 250);
    tick();
    return () => {
      clock.subscribers.delete(tick);
      if (!clock.subscribers.size) { clearInterval(clock.timer); clock.timer = 0; }
    };
  }, [active]);
  return now;
}

// Retries of the event stream: at once after a dropped connection that was delivering, then doubling
// from half a second to at most 8 s while the server does not answer.
const retryDelay = (failures) => (failures ? Math.min(8000, 500 * 2 ** (failures - 1)) : 300);

// One run's stream: entries in seq order, each seq exactly once, whatever reconnects happen. Records are
// folded and shown at most once per animation frame, however fast they come.
function useRunStream(runId) {
  const [feed, setFeed] = useState({ entries: [], state: initial(), conn: 'connecting', end: null, error: null,
                                     retryAt: null, retryNow: null });
  useEffect(() => {
    if (!runId) return undefined;
    const seen = new Set();
    let entries = [];
    let state = initial();
    let conn = 'connecting';
    let end = null;
    let error = null;
    let retryAt = null;
    let opened = 0;
    let lastId = 0;
    let failures = 0;
    let stopped = false;
    let pending = [];
    let frame = 0;
    let fallback = 0;
    let wake = null;
    const abort = new AbortController();
    Object.assign(stats, { received: 0, dupes: 0, missing: null, reconnects: 0, end: null });
    const retryNow = () => { if (wake) wake(); };
    const publish = () => setFeed({ entries, state, conn, end, error, retryAt, retryNow });
    const flush = () => {
      cancelAnimationFrame(frame); clearTimeout(fallback); frame = 0; fallback = 0;
      if (pending.length) {
        entries = entries.concat(pending);
        for (const e of pending) state = apply(state, e);
        pending = [];
      }
      publish();
    };
    // A hidden tab gets no animation frames: a timer folds its records all the same.
    const schedule = () => { if (!frame) { frame = requestAnimationFrame(flush); fallback = setTimeout(flush, 500); } };
    const onEvent = (name, data, id) => {
      if (id) lastId = Number(id);
      if (name === 'records') {
        failures = 0;
        for (const e of JSON.parse(data).records) {
          const seqs = seqsOf(e);
          if (seqs.some((q) => seen.has(q))) { stats.dupes += 1; continue; }
          seqs.forEach((q) => seen.add(q));
          stats.received += seqs.length;
          pending.push(e);
        }
        if (pending.length) schedule();
      } else if (name === 'end') {
        end = JSON.parse(data);
        let missing = 0;
        for (let q = 1; q <= end.last_seq; q++) if (!seen.has(q)) missing += 1;
        Object.assign(stats, { missing, end });
        conn = 'ended';
        flush();
      }
    };
    const onOpen = () => { opened += 1; stats.reconnects = opened - 1; conn = 'live'; error = null; retryAt = null; publish(); };
    const pause = (ms) => new Promise((resolve) => { const t = setTimeout(resolve, ms); wake = () => { clearTimeout(t); resolve(); }; });
    (async () => {
      while (!stopped && !end) {
        try {
          await readEvents(`/runs/${encodeURIComponent(runId)}/events`, lastId, { onOpen, onEvent, signal: abort.signal });
          if (end || stopped) break;
          conn = 'reconnecting';  // the response ended before the run did: resume after the last id
        } catch (err) {
          if (stopped || (err && err.name === 'AbortError')) return;
          if (!(err instanceof RequestError)) throw err;
          if (err.status !== 0 && err.status < 500) {  // no such run, or not signed in: trying again won't help
            error = err.message; conn = 'closed'; flush(); return;
          }
          failures += 1;
          conn = err.status === 0 ? 'unreachable' : 'reconnecting';
          error = null;
        }
        const delay = retryDelay(failures);
        retryAt = Date.now() + delay;
        flush();
        await pause(delay);
        retryAt = null;
      }
    })();
    return () => { stopped = true; abort.abort(); cancelAnimationFrame(frame); clearTimeout(fallback); if (wake) wake(); };
  }, [runId]);
  return feed;
}

const say = (err) => (err instanceof RequestError ? err.message : String(err && err.message ? err.message : err));

// Text that may be too long to lay out: its first `cap` characters, a note that says so, and the whole
// text as a download. `render` turns the shown part into nodes (plain text with break opportunities).
function Long({ text, cap = CAP, name = 'text', render: show = breakable }) {
  const c = clip(text, cap);
  if (c.whole) return show(c.shown);
  return html`${show(c.shown)}<span class="clip-note" data-testid="clip-note"> … showing the first ${count(cap)} of ${
    count(c.total)} characters <button class="link" data-testid="download-full" onClick=${() => download(name, String(text))}>download all</button></span>`;
}

function download(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `${name.replace(/[^\w.-]+/g, '_')}.txt`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

function Chip({ kind, children, title }) {
  return html`<span class=${`chip chip-${kind}`} title=${title || ''}>${children}</span>`;
}

function Header({ s, conn, ticking, retryAt, retryNow }) {
  const now = useNow(ticking || retryAt != null);
  const elapsed = s.firstTs == null ? null : (ticking && s.phase !== 'finished' ? now : s.lastTs) - s.firstTs;
  const budget = s.budget || {};
  return html`<header class="run-header" data-testid="run-header">
    <div class="question">${s.question ? html`<${Long} text=${s.question} cap=${2000} name="question" />` : '…'}</div>
    <div class="facts">
      <${Chip} kind=${s.phase}>${s.phase}</${Chip}>
      <span>round <b data-testid="round">${s.round}</b></span>
      <span>elapsed <b>${secs(elapsed)}</b>${s.deadlineS ? html` / ${s.deadlineS} s` : ''}</span>
      <span>tokens <b>${fmt(s.totals.inTok)}</b> in, <b>${fmt(s.totals.outTok)}</b> out${
        budget.max_tokens ? html` (<b>${fmt(s.totals.inTok + s.totals.outTok)}</b> / ${fmt(budget.max_tokens)})` : ''}</span>
      <span>calls <b>${s.totals.calls}</b>${budget.max_model_calls ? html` / ${budget.max_model_calls}` : ''}</span>
      <span>cost <b>${money(s.totals.cost)}</b></span>
      <span>seq <b data-testid="seq">${s.seq}</b></span>
      <${Chip} kind=${`conn-${conn}`}><span data-testid="conn">${conn === 'unreachable' ? 'server unreachable' : conn}</span></${Chip}>
      ${retryAt != null && html`<span class="retry"><span data-testid="retry-in">next try in ${
        Math.max(1, Math.ceil(retryAt / 1000 - now))} s</span> <button class="link" data-testid="retry-now" onClick=${retryNow}>try now</button></span>`}
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
function Alive({ a }) {
  const now = useNow(true);
  if (!BUSY.has(a.status)) return null;
  const from = a.callingSince ?? a.since;
  if (from == null) return null;
  const waited = Math.max(0, Math.floor(now - from));
  const what = a.callingSince != null ? 'model working' : a.status;
  return html`<span class="alive" data-testid=${`alive-${a.id}`}>${SPINNER[Math.floor(now * 4) % SPINNER.length]} ${what} ${waited}s</span>`;
}

// An answer in its lane: the first few lines, and all of it on request.
function Collapsible({ text, testid, name }) {
  const box = useRef(null);
  const [open, setOpen] = useState(false);
  const [long, setLong] = useState(false);
  const c = clip(text);
  useLayoutEffect(() => { if (box.current && !open) setLong(box.current.scrollHeight > box.current.clientHeight + 1); }, [text, open]);
  return html`<div class="answer-box" data-testid=${testid}>
    <div class=${`answer-text ${open ? '' : 'clamped'}`} ref=${box}>${breakable(c.shown)}</div>
    ${!c.whole && html`<${Long} text=${text} name=${name} render=${() => null} />`}
    ${(long || open) && html`<button class="more" data-testid=${`${testid}-more`} onClick=${() => setOpen(!open)}>
      ${open ? 'show less' : 'show all'}</button>`}</div>`;
}

function Outcome({ t }) {
  if (t.answer) {
    return html`<div class="outcome">→ answered ${t.answer.label}</div>
      <${Collapsible} text=${t.answer.content} testid=${`answer-${t.answer.label}`} name=${t.answer.label} />`;
  }
  if (t.vote) {
    return html`<div class="outcome">→ voted for ${t.vote.target}</div>
      <div class="vote-reason" data-testid="vote-reason"><${Long} text=${t.vote.reason} cap=${2000} name="reason" /></div>`;
  }
  return t.outcome ? html`<div class="outcome">→ ${t.outcome}</div>` : null;
}

// Turns are numbered per agent (its first turn is turn 1); the trace's turn id is the tooltip.
function Turn({ t, n }) {
  const name = t.kind === 'final presentation' ? t.kind : `${t.kind} ${n}`;
  return html`<div class="turn">
    <div class="turn-head" title=${`turn_id ${t.id} in the trace`}>${name}${t.view.length ? html` · saw ${t.view.join(', ')}` : ''}</div>
    ${t.reasoning && html`<div class="reasoning"><${Long} text=${t.reasoning} name="reasoning" /></div>`}
    ${t.text && html`<div class="text"><${Long} text=${t.text} name="text" /></div>`}
    ${t.tools.map((c) => html`<div class=${`tool ${c.error ? 'tool-error' : ''}`}>
      <div class="tool-name">⚙ <${Long} text=${c.name} cap=${200} name="tool" /></div><code><${Long} text=${JSON.stringify(c.args)} cap=${2000} name="arguments" /></code>
      ${c.result != null && html`<div class="tool-result"><${Long} text=${c.result} name="result" /></div>`}</div>`)}
    <${Outcome} t=${t} />
  </div>`;
}

// Follows the tail while the reader is at the bottom; scrolling up holds the view.
const Lane = pure(({ a, live, ticking, runId, pick }) => {
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
  const [failed, setFailed] = useState(null);
  const act = (verb) => post(`/runs/${encodeURIComponent(runId)}/agents/${encodeURIComponent(a.id)}/${verb}`)
    .then(() => setFailed(null), (err) => setFailed(`${verb}: ${say(err)}`));
  return html`<section class="lane" data-testid=${`lane-${a.id}`}>
    <div class="lane-head">
      <b>${a.label}</b> <span class="muted">${a.id}#${a.incarnation}</span>
      <${Chip} kind=${a.status}><span data-testid=${`status-${a.id}`}>${a.status}</span></${Chip}>
      ${live && ticking && html`<${Alive} a=${a} />`}
      ${live && html`<span class="lane-actions">
        <button data-testid=${`kill-${a.id}`} disabled=${!ticking} onClick=${() => act('kill')}>kill</button>
        <button data-testid=${`restart-${a.id}`} disabled=${!ticking} onClick=${() => act('restart')}>restart</button></span>`}
    </div>
    ${failed && html`<div class="error" data-testid=${`lane-error-${a.id}`}>${failed}</div>`}
    <div class="lane-meta">${fmt(a.inTok)} in · ${fmt(a.outTok)} out · ${a.calls} ${a.calls === 1 ? 'call' : 'calls'} · ${money(a.cost)}
      ${a.answers.map((l) => html` <button class="version" onClick=${() => pick(l)}>${l}</button>`)}
      ${a.votedFor && html` <span class="muted">voted ${a.votedFor}</span>`}</div>
    ${a.error && html`<div class="error"><${Long} text=${a.error} cap=${2000} name="error" /></div>`}
    <div class="lane-body" ref=${body} onScroll=${onScroll} data-testid=${`lane-body-${a.id}`}>
      ${a.turns.map((t, i) => html`<${Turn} key=${t.id} t=${t} n=${i + 1} />`)}
    </div>
    ${paused && html`<button class="follow" onClick=${resume}>↓ follow</button>`}
  </section>`;
});

const Timeline = pure(({ timeline, firstTs }) => html`<section class="panel timeline" data-testid="timeline"><h3>Timeline</h3>
    <ol>${timeline.map((t) => html`<${TimelineRow} key=${t.seq} t=${t} firstTs=${firstTs} />`)}</ol></section>`);

const TimelineRow = pure(({ t, firstTs }) => html`<li class=${`tl tl-${t.kind} ${t.struck ? 'struck' : ''}`}>
      <span class="seqno">#${t.seq}</span> <span class="muted">${(t.ts - firstTs).toFixed(2)}s</span>
      <span class="tl-text"><${Long} text=${t.text} cap=${500} name="timeline" /></span>
      ${t.refs && t.refs.length ? html`<span class="refs">${t.refs.slice(0, 20).map((r) => html`<span class="ref">↖ ${r}</span>`)}${
        t.refs.length > 20 ? html`<span class="ref">… ${t.refs.length - 20} more</span>` : ''}</span>` : ''}
    </li>`);

// Answers and votes by agent (rows) in trace order (columns); dashed arrows: the answers each one
// saw (from trace causation); solid: a vote's target. A vote that no longer counts is struck.
const MAX_SAW = 400;
const Graph = pure(({ s }) => {
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
  // "Saw" arrows grow as answers times their readers: past a few hundred they hide the graph (and take
  // seconds to draw), so then only the votes' arrows are drawn.
  const sawCount = items.reduce((n, it) => n + (it.saw || []).length, 0);
  const drawSaw = sawCount <= MAX_SAW;
  items.forEach((it, i) => {
    const [x, y] = [X(i), Y(it.agent)];
    if (drawSaw) for (const l of it.saw || []) if (at[l] && l !== it.targetLabel) edges.push(html`<line class="saw" x1=${at[l][0]} y1=${at[l][1]} x2=${x} y2=${y} />`);
    if (it.kind === 'vote' && at[it.targetLabel]) {
      edges.push(html`<line class=${it.valid ? 'target' : 'target struck-line'} x1=${x} y1=${y} x2=${at[it.targetLabel][0]} y2=${at[it.targetLabel][1]} marker-end="url(#arrow)" />`);
    }
  });
  return html`<section class="panel graph" data-testid="graph"><h3>Coordination${drawSaw ? '' : html` <span class="muted">(${
    count(sawCount)} "saw" arrows not drawn)</span>`}</h3><div class="graph-scroll">
    <svg width=${width} height=${height}>
      <defs><marker id="arrow" viewBox="0 0 10 10" refX="16" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
        <path d="M 0 0 L 10 5 L 0 10 z" /></marker></defs>
      ${s.order.map((a) => html`<text class="row-label" x="4" y=${Y(a) + 4}>${s.agents[a].label}</text>`)}
      ${edges}
      ${items.map((it, i) => (it.kind === 'answer'
        ? html`<g class="node answer"><circle cx=${X(i)} cy=${Y(it.agent)} r="11" /><text x=${X(i)} y=${Y(it.agent) + 4}>${it.label.replace('agent', '')}</text><title>${it.label}: ${clip(it.content, 500).shown}</title></g>`
        : html`<g class=${`node vote ${it.valid ? '' : 'struck'}`}><rect x=${X(i) - 8} y=${Y(it.agent) - 8} width="16" height="16" /><text x=${X(i)} y=${Y(it.agent) + 4}>v</text><title>${it.voterLabel} → ${it.targetLabel}: ${clip(it.reason, 500).shown}</title></g>`))}
    </svg></div></section>`;
});

const Votes = pure(({ votes }) => html`<section class="panel" data-testid="votes"><h3>Votes</h3>
    <table><tbody>${votes.map((v) => html`<${VoteRow} key=${v.seq} v=${v} />`)}</tbody></table></section>`);

const VoteRow = pure(({ v }) => html`<tr class=${v.valid ? 'vote' : 'vote struck'}>
      <td>${v.voterLabel}</td><td>→ <b>${v.targetLabel}</b></td><td class="reason"><${Long} text=${v.reason} cap=${2000} name="reason" /></td><td class="muted">r${v.round}</td>
    </tr>`);

function Final({ s }) {
  if (!s.final) return null;
  const f = s.final;
  return html`<section class="panel final" data-testid="final"><h3>Final answer
      ${bestSoFar(s) && html` <${Chip} kind="partial"><span data-testid="best-so-far">best so far</span></${Chip}>`}</h3>
    <div class="muted" data-testid="final-status">${f.status}: ${finalReason(s)}${f.winner_label ? ` · from ${f.winner_label}` : ''}${
      s.answerNow ? ' · after answer now' : ''}</div>
    ${f.presentation_not_used && html`<div class="notice" data-testid="final-presentation-not-used">The winning answer as
      written, not its presentation: ${f.presentation_not_used}</div>`}
    <div data-testid="final-answer">${f.final_answer == null ? html`<i>no answer</i>`
      : html`<${Long} text=${f.final_answer} name="final-answer" render=${markdown} />`}</div>
  </section>`;
}

function Diff({ s, picked }) {
  const labels = s.answerOrder;
  const [left, setLeft] = useState('');
  const [right, setRight] = useState('');
  useEffect(() => { if (picked) { setLeft(right || labels[0] || ''); setRight(picked); } }, [picked]);
  const a = s.answers[left]; const b = s.answers[right];
  const pieces = useMemo(() => (a && b ? wordDiff(clip(a.content).shown, clip(b.content).shown) : []), [a, b]);
  const clipped = (a && !clip(a.content).whole) || (b && !clip(b.content).whole);
  if (!labels.length) return null;
  const sel = (v, set) => html`<select value=${v} onChange=${(ev) => set(ev.target.value)}>
    <option value="">–</option>${labels.map((l) => html`<option value=${l}>${l}</option>`)}</select>`;
  const side = (keep) => pieces.filter(([op]) => op === 'same' || op === keep).map(([op, t]) => html`<span class=${op}>${breakable(t)}</span>`);
  return html`<section class="panel" data-testid="diff"><h3>Compare answers ${sel(left, setLeft)} ${sel(right, setRight)}</h3>
    ${clipped && html`<div class="muted">comparing the first ${count(CAP)} characters of each</div>`}
    <div class="diff-cols"><div class="diff">${side('del')}</div><div class="diff">${side('ins')}</div></div></section>`;
}

function Notes({ s }) {
  const notes = Object.values(s.notes);
  if (!notes.length) return null;
  return html`<section class="panel" data-testid="notes"><h3>Notes</h3>${notes.map((n) => html`<div class="note-row">
    “<${Long} text=${n.text} cap=${4000} name="note" />” → ${n.to.map((a) => html`<span class=${n.delivered[a] ? 'ok' : 'muted'}>${(s.agents[a] || {}).label || a} ${n.delivered[a] ? `✓ #${n.delivered[a]}` : '…'} </span>`)}
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
    <div class="events">${rows.slice(-300).map((e) => html`<${Record} key=${e.seq} e=${e} />`)}</div></section>`;
}

// One record in the inspector: its JSON is made only while it is open.
const Record = pure(({ e }) => {
  const [open, setOpen] = useState(false);
  return html`<details onToggle=${(ev) => setOpen(ev.currentTarget.open)}><summary>
      #${e.seq}${e.last_seq && e.last_seq !== e.seq ? `–${e.last_seq}` : ''} ${e.kind} <b>${e.type}</b> ${e.sender} → ${e.to || '·'}</summary>
      ${open && html`<pre><${Long} text=${JSON.stringify(e, null, 1)} name=${`record-${e.seq}`} /></pre>`}</details>`;
});

const Controls = pure(({ runId, order, labels, enabled }) => {
  const [text, setText] = useState('');
  const [to, setTo] = useState('');
  const [failed, setFailed] = useState(null);
  const id = encodeURIComponent(runId);
  const act = (what, path, body, then = () => {}) => post(path, body).then(() => { setFailed(null); then(); },
                                                                           (err) => setFailed(`${what}: ${say(err)}`));
  const send = () => { if (text.trim()) act('send note', `/runs/${id}/notes`, { text, agent: to || null }, () => setText('')); };
  return html`<div class="controls" data-testid="controls">
    <button data-testid="cancel" disabled=${!enabled} onClick=${() => act('cancel', `/runs/${id}/cancel`)}>cancel</button>
    <button data-testid="answer-now" disabled=${!enabled} onClick=${() => act('answer now', `/runs/${id}/answer_now`)}>answer now</button>
    <input data-testid="note-text" placeholder="a note for the agents" value=${text} onInput=${(ev) => setText(ev.target.value)} />
    <select data-testid="note-to" value=${to} onChange=${(ev) => setTo(ev.target.value)}>
      <option value="">all agents</option>${order.map((a) => html`<option value=${a}>${labels[a]} (${a})</option>`)}
    </select>
    <button data-testid="send-note" disabled=${!enabled} onClick=${send}>send note</button>
    ${failed && html`<span class="error" data-testid="control-error">${failed}</span>`}
  </div>`;
});

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
  const s = useMemo(() => (pos == null ? feed.state : foldTo(feed.entries, pos)), [feed, pos]);
  const labels = useMemo(() => Object.fromEntries(s.order.map((a) => [a, s.agents[a].label])), [s.order]);
  // The graph changes with answers, votes and the lanes' order only.
  const graph = useMemo(() => ({ ...s }), [s.answers, s.answerOrder, s.votes, s.order]);
  window.__mgState = s;  // what tests read: the state on screen
  window.__mgRenders += 1;
  if (feed.error && !feed.entries.length) {
    return html`<div class="run" data-testid="run"><div class="panel run-error" data-testid="run-error">${feed.error}</div></div>`;
  }
  const running = feed.conn !== 'ended' && feed.conn !== 'closed' && s.phase !== 'finished';
  const connected = feed.conn === 'live';  // clocks and spinners count, and controls act, only while connected
  return html`<div class="run" data-testid="run">
    <${Header} s=${s} conn=${pos == null ? feed.conn : 'replay'} ticking=${running && connected}
      retryAt=${feed.retryAt} retryNow=${feed.retryNow} />
    ${feed.error && html`<div class="panel run-error" data-testid="run-error">${feed.error}</div>`}
    ${running ? html`<${Controls} runId=${runId} order=${s.order} labels=${labels} enabled=${connected} />`
      : html`<${Scrubber} entries=${feed.entries} pos=${pos} setPos=${setPos} />`}
    <${Final} s=${s} />
    <div class="lanes">${s.order.map((id) => html`<${Lane} key=${id} a=${s.agents[id]} live=${running} ticking=${running && connected}
      runId=${runId} pick=${setPicked} />`)}</div>
    <${Graph} s=${graph} />
    <div class="grid">
      <div><${Votes} votes=${s.votes} /><${Notes} s=${s} /><${Diff} s=${s} picked=${picked} /></div>
      <${Timeline} timeline=${s.timeline} firstTs=${s.firstTs} />
    </div>
    <${Inspector} entries=${feed.entries} limit=${pos ?? Infinity} />
  </div>`;
}

function Sidebar({ current, open, version }) {
  const [runs, setRuns] = useState([]);
  const [configs, setConfigs] = useState([]);
  const [question, setQuestion] = useState('');
  const [config, setConfig] = useState('');
  const [failed, setFailed] = useState(null);
  const load = () => getJSON('/runs').then((d) => { setRuns(d.runs || []); setConfigs(d.configs || []); setConfig((c) => c || (d.configs || [])[0] || ''); }).catch(() => {});
  useEffect(() => { load(); const t = setInterval(load, 3000); return () => clearInterval(t); }, [version]);
  const start = (ev) => {
    ev.preventDefault();
    post('/runs', { question, config: config || configs[0] }).then((d) => { setFailed(null); setQuestion(''); open(d.id); load(); },
                                                                (err) => setFailed(`start run: ${say(err)}`));
  };
  return html`<aside class="sidebar"><div class="sidebar-inner">
    <form onSubmit=${start} data-testid="start-form">
      <textarea data-testid="question" placeholder="Ask the team…" value=${question} onInput=${(ev) => setQuestion(ev.target.value)} />
      <select data-testid="config" value=${config} onChange=${(ev) => setConfig(ev.target.value)}>
        ${configs.map((c) => html`<option value=${c}>${c}</option>`)}</select>
      <button type="submit" data-testid="start">start run</button>
      ${failed && html`<div class="error" data-testid="start-error">${failed}</div>`}
    </form>
    <h3>Runs</h3>
    <ul class="runs" data-testid="runs">${runs.map((r) => html`<li key=${r.id} class=${r.id === current ? 'current' : ''}>
      <a href=${`?run=${encodeURIComponent(r.id)}`} data-run=${r.id} onClick=${(ev) => { ev.preventDefault(); open(r.id); }}>
        <${Chip} kind=${r.status}>${r.status}</${Chip}> ${breakable(r.question.slice(0, 80)) || r.id}</a></li>`)}</ul>
  </div></aside>`;
}

// Until this tab holds the UI token: the printed URL's token is traded at once; without one, a form asks
// for it (with --api-key: the key, which then never sits in the address bar).
function SignIn({ given, done }) {
  const [value, setValue] = useState('');
  const [failed, setFailed] = useState(null);
  const go = (token) => signIn(token).then(done, (err) => setFailed(say(err)));
  useEffect(() => { if (given) go(given); }, []);
  return html`<form class="panel sign-in" data-testid="sign-in" onSubmit=${(ev) => { ev.preventDefault(); go(value); }}>
    <h3>Sign in</h3>
    <p class="muted">Open the URL that <code>massgen serve --ui</code> printed, or paste its token (with
      <code>--api-key</code>: the key) here.</p>
    <input type="password" data-testid="sign-in-token" autocomplete="off" value=${value} onInput=${(ev) => setValue(ev.target.value)} />
    <button type="submit">sign in</button>
    ${failed && html`<div class="error" data-testid="sign-in-error">${failed}</div>`}
  </form>`;
}

const given = tokenFromUrl();

function Gate() {
  const [signed, setSigned] = useState(Boolean(session.get()) && !given);
  useEffect(() => session.onSignedOut(() => setSigned(false)), []);
  if (!signed) return html`<main class="signed-out"><${SignIn} given=${given} done=${() => setSigned(true)} /></main>`;
  return html`<${App} />`;
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

render(html`<${Gate} />`, document.getElementById('app'));
