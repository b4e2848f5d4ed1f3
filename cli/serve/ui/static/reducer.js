// The page's state is one pure function folded over trace records: live, reconnect,
// a second tab and a replay are all `entries.reduce(apply, initial())`. `apply` never
// mutates its input; `limit` cuts a merged text entry at a seq, so "state at seq N" is exact.

export function initial() {
  return {
    seq: 0, count: 0, firstTs: null, lastTs: null, question: '', runId: '', order: [], agents: {},
    phase: 'waiting', round: 0, deadlineS: null, budget: null, answers: {}, answerOrder: [], votes: [],
    ballots: {}, tally: null, judged: null, live: [], liveSet: new Set(), voteRound: null, timeline: [], notes: {}, final: null, answerNow: false, msgs: {},
    totals: { calls: 0, inTok: 0, outTok: 0, cost: 0 },
  };
}

const agentOf = (sender) => String(sender || '').split('#')[0];
const incarnationOf = (sender) => Number(String(sender || '').split('#')[1] || 0);
const labelOf = (s, agent) => (s.agents[agent] ? s.agents[agent].label : agent);

function withAgent(s, id, fn) {
  const agent = s.agents[id];
  if (!agent) return s;
  return { ...s, agents: { ...s.agents, [id]: fn(agent) } };
}

function withTurn(agent, turnId, fn) {
  const i = agent.turns.findIndex((t) => t.id === turnId);
  if (i < 0) return agent;
  const turns = agent.turns.slice();
  turns[i] = fn(turns[i]);
  return { ...agent, turns };
}

function note(s, e, kind, text, extra = {}) {
  return { ...s, timeline: [...s.timeline, { seq: e.seq, ts: e.ts, kind, text, ...extra }] };
}

// Which answer labels the turn behind a proposal saw: its StartTurn view plus injections before it.
function sawOf(s, proposalId) {
  const proposal = s.msgs[proposalId];
  const start = proposal && s.msgs[proposal.cause];
  if (!start) return [];
  const injected = s.msgs[`inject:${start.agent}:${start.turnId}`] || { labels: [] };
  return [...new Set([...start.labels, ...injected.labels])];
}

// The tally as the judge keeps it (actors/coordination/judge.py): each live voter's latest vote that still counts,
// per target agent. Derived from the votes on screen, so a vote and its tally always agree, also at a
// seq between a RecordVote and the TallyUpdated it causes; `converged` and `winner` are the judge's
// word from its last TallyUpdated for the same votes. `ballots` keeps each voter's latest vote that still
// counts (voter -> {target, round}), so a vote changes the counts by what it changes (issue 51: a round of N
// votes rescanned every vote for each, N^2 times the live list); the counts are made again from the ballots
// only when the live agents or the round change.
function withTally(s, counts = recount(s)) {
  if (!s.votes.length && !s.judged) return { ...s, tally: null };
  const keys = Object.keys(counts);
  const same = s.judged && keys.length === Object.keys(s.judged.counts).length
    && keys.every((k) => s.judged.counts[k] === counts[k]);
  return { ...s, tally: { counts, converged: Boolean(same && s.judged.converged), winner: same ? s.judged.winner : null } };
}

function recount(s) {
  const counts = {};
  for (const [voter, b] of Object.entries(s.ballots)) if (s.liveSet.has(voter)) counts[b.target] = (counts[b.target] || 0) + 1;
  return counts;
}

// The counts after `vote` (one that counts) replaces its voter's earlier ballot: one target less, one more.
function counted(s, vote) {
  const counts = { ...(s.tally ? s.tally.counts : {}) };
  if (!s.liveSet.has(vote.voter)) return counts;
  const before = s.ballots[vote.voter];
  if (before) {
    counts[before.target] -= 1;
    if (!counts[before.target]) delete counts[before.target];
  }
  counts[vote.target] = (counts[vote.target] || 0) + 1;
  return counts;
}

// Statuses of an agent in the middle of something; once the run is over none of them is true.
export const BUSY = new Set(['starting', 'idle', 'working', 'voting', 'presenting', 'restarting']);

// `since`: when the agent's current status began (trace time); `callingSince`: when its model call went
// out (null between calls). A lane shows them as the terminal's panel does, so a quiet model is seen at work.
function newAgent(id, label, ts) {
  return { id, label, status: 'starting', incarnation: 1, turns: [], answers: [], votedFor: null,
           calls: 0, inTok: 0, outTok: 0, cost: 0, error: null, since: ts, callingSince: null };
}

export function apply(s, e, limit = Infinity) {
  const p = e.payload || {};
  const kind = e.kind;
  let last = e.last_seq || e.seq;
  let count = e.parts ? e.parts.length : 1;
  let text = p.text;
  if (e.parts && last > limit) {  // a merged text entry, cut at `limit`
    const parts = e.parts.filter(([seq]) => seq <= limit);
    count = parts.length;
    last = parts.length ? parts[parts.length - 1][0] : e.seq;
    text = String(p.text).slice(0, parts.reduce((n, [, len]) => n + len, 0));
  }
  // Merged text entries come in order of their first seq, so the newest seq seen is a max.
  s = { ...s, seq: Math.max(s.seq, last), count: s.count + count, lastTs: Math.max(s.lastTs ?? e.ts, e.ts), firstTs: s.firstTs ?? e.ts };
  const sender = agentOf(e.sender);
  switch (e.type) {
    case 'RunStarted': {
      const agents = {};
      p.agents.forEach((id, i) => { agents[id] = newAgent(id, p.labels[i], e.ts); });
      const cfg = p.config || {};
      // Round 1 from the start, as the terminal's header counts (the judge's rounds are 1-based).
      s = { ...s, runId: e.run_id, question: p.question, order: [...p.agents], agents, live: [...p.agents], liveSet: new Set(p.agents), phase: 'coordinating',
            round: Math.max(s.round, 1),
            deadlineS: (cfg.timeout_settings || {}).orchestrator_timeout_seconds ?? null,
            budget: (cfg.orchestrator || {}).budget || null,
            winnerRule: (cfg.orchestrator || {}).winner_rule || 'support' };
      return note(s, e, 'run', `run started with ${p.agents.length} agents`);
    }
    case 'ChildStarted':
      return withAgent(s, p.name, (a) => ({ ...a, status: 'idle', incarnation: p.incarnation, error: null, since: e.ts,
                                            callingSince: null }));
    case 'TurnStarted':
      return withAgent(s, p.agent, (a) => ({
        ...a, status: p.vote_only ? 'voting' : 'working', incarnation: p.incarnation, since: e.ts, callingSince: null,
        turns: [...a.turns, { id: p.turn_id, kind: p.vote_only ? 'vote-only turn' : 'turn', view: p.view_labels,
                              text: '', reasoning: '', tools: [], outcome: null }],
      }));
    case 'StartTurn':
      if (kind !== 'tell') return s;
      return { ...s, msgs: { ...s.msgs, [e.msg_id]: { agent: agentOf(e.to), turnId: p.turn_id,
                                                      labels: p.view.answers.map((a) => a.label) } } };
    case 'InjectAnswers': {
      if (kind !== 'tell') return s;
      const agent = agentOf(e.to);
      const key = `inject:${agent}:${p.turn_id}`;
      const labels = p.view.answers.map((a) => a.label);
      const before = (s.msgs[key] || { labels: [] }).labels;
      s = { ...s, msgs: { ...s.msgs, [key]: { labels: [...new Set([...before, ...labels])] } } };
      return note(s, e, 'inject', `${labelOf(s, agent)} is shown new answers mid-turn`, { agent, refs: labels });
    }
    case 'AgentChunk': {
      if (kind !== 'tell') return s;
      const a = s.agents[sender];
      if (!a || a.incarnation !== incarnationOf(e.sender)) return s;  // a late chunk of an abandoned incarnation
      const field = p.kind === 'reasoning' ? 'reasoning' : 'text';
      return withAgent(s, sender, (ag) => withTurn(ag, p.turn_id, (t) => ({ ...t, [field]: t[field] + text })));
    }
    case 'ModelCallStarted':
      if (kind !== 'tell' || !s.agents[sender] || s.agents[sender].incarnation !== incarnationOf(e.sender)) return s;
      return withAgent(s, sender, (a) => ({ ...a, callingSince: e.ts }));
    case 'ModelCallFinished': {
      if (kind !== 'tell') return s;
      const cost = p.cost_usd || 0;
      s = { ...s, totals: { calls: s.totals.calls + 1, inTok: s.totals.inTok + p.input_tokens,
                            outTok: s.totals.outTok + p.output_tokens, cost: s.totals.cost + cost } };
      return withAgent(s, sender, (a) => ({ ...a, callingSince: null, calls: a.calls + 1, inTok: a.inTok + p.input_tokens,
                                             outTok: a.outTok + p.output_tokens, cost: a.cost + cost }));
    }
    case 'ToolCallRequested':
      if (kind !== 'tell') return s;
      return withAgent(s, sender, (a) => withTurn(a, p.turn_id, (t) => ({
        ...t, tools: [...t.tools, { id: p.call_id, name: p.name, args: p.arguments, result: null, error: false }],
      })));
    case 'ToolCallResult':
      if (kind !== 'tell') return s;
      return withAgent(s, sender, (a) => withTurn(a, p.turn_id, (t) => ({
        ...t, tools: t.tools.map((c) => (c.id === p.call_id ? { ...c, result: p.content, error: p.is_error } : c)),
      })));
    case 'AnswerProposed':
    case 'VoteProposed':
      if (kind !== 'tell') return s;
      return { ...s, msgs: { ...s.msgs, [e.msg_id]: { cause: e.causation_id } } };
    case 'AnswerAccepted': {
      const saw = sawOf(s, e.causation_id);
      const answer = { label: p.label, agent: p.agent, content: p.content, round: p.round, seq: e.seq, saw };
      s = { ...s, round: Math.max(s.round, p.round), answers: { ...s.answers, [p.label]: answer },
            answerOrder: [...s.answerOrder, p.label] };
      s = withAgent(s, p.agent, (a) => withTurn({ ...a, status: 'answered', answers: [...a.answers, p.label] },
                                                 a.turns.length ? a.turns[a.turns.length - 1].id : -1,
                                                 (t) => ({ ...t, outcome: `answered ${p.label}`,
                                                           answer: { label: p.label, content: p.content } })));
      return note(s, e, 'answer', `${p.label} from ${labelOf(s, p.agent)}`, { agent: p.agent, label: p.label, refs: saw });
    }
    case 'InvalidateVotes': {
      if (kind !== 'tell') return s;
      const struck = s.votes.filter((v) => v.valid && v.round < p.round).length;
      s = { ...s, voteRound: p.round };
      if (!struck) return s;
      const ballots = Object.fromEntries(Object.entries(s.ballots).filter(([, b]) => b.round >= p.round));
      s = withTally({ ...s, ballots, votes: s.votes.map((v) => (v.valid && v.round < p.round ? { ...v, valid: false } : v)),
            timeline: s.timeline.map((t) => (t.kind === 'vote' && !t.struck && t.round < p.round ? { ...t, struck: true } : t)) });
      return note(s, e, 'invalidate', `${struck} vote(s) no longer count: ${p.reason}`);
    }
    case 'RecordVote': {
      if (kind !== 'tell') return s;
      const saw = sawOf(s, e.causation_id);
      const vote = { voter: p.voter, voterLabel: labelOf(s, p.voter), target: p.target, targetLabel: p.target_label,
                     reason: p.reason, round: p.round, seq: e.seq,
                     valid: s.voteRound == null || p.round === s.voteRound, saw };  // the judge drops other rounds' votes
      const counts = vote.valid ? counted(s, vote) : s.tally ? s.tally.counts : {};
      const ballots = vote.valid ? { ...s.ballots, [p.voter]: { target: p.target, round: p.round } } : s.ballots;
      s = withTally({ ...s, ballots, votes: [...s.votes, vote] }, counts);
      s = withAgent(s, p.voter, (a) => withTurn({ ...a, status: 'voted', votedFor: p.target_label },
                                                 a.turns.length ? a.turns[a.turns.length - 1].id : -1,
                                                 (t) => ({ ...t, outcome: `voted for ${p.target_label}`,
                                                           vote: { target: p.target_label, reason: p.reason } })));
      return note(s, e, 'vote', `${vote.voterLabel} votes for ${p.target_label}: ${p.reason}`,
                  { agent: p.voter, refs: saw, target: p.target_label, round: p.round });
    }
    case 'SetLiveAgents':
      return kind === 'tell' ? withTally({ ...s, live: [...p.agents], liveSet: new Set(p.agents) }) : s;
    case 'TallyUpdated':
      return kind === 'tell'
        ? withTally({ ...s, judged: { counts: p.counts, converged: p.converged, winner: p.winner } }, s.tally ? s.tally.counts : {})
        : s;
    case 'CancelRun':
      return kind === 'tell' ? note(s, e, 'control', `cancel: ${p.reason}`) : s;
    case 'AnswerNow':
      return kind === 'tell' ? note({ ...s, answerNow: true }, e, 'control', 'answer now: vote on what exists') : s;
    case 'SetRunTimeout':
      return kind === 'tell' ? note({ ...s, deadlineS: p.seconds }, e, 'control', `deadline set to ${p.seconds} s`) : s;
    case 'KillAgent':
    case 'RestartAgent':
      if (kind !== 'tell') return s;
      return note(s, e, 'control', `${e.type === 'KillAgent' ? 'kill' : 'restart'} ${labelOf(s, p.name)}`, { agent: p.name });
    case 'SendNote': {
      if (kind !== 'tell') return s;
      const to = p.to ? [p.to] : [...s.order];
      s = { ...s, notes: { ...s.notes, [e.msg_id]: { id: e.msg_id, text: p.text, to, seq: e.seq, delivered: {} } } };
      return note(s, e, 'note', `note to ${p.to ? labelOf(s, p.to) : 'all agents'}: ${p.text}`);
    }
    case 'NoteDelivered': {
      if (kind !== 'tell' || !s.notes[p.note_id]) return s;
      const n = s.notes[p.note_id];
      s = { ...s, notes: { ...s.notes, [p.note_id]: { ...n, delivered: { ...n.delivered, [sender]: e.seq } } } };
      return note(s, e, 'note', `note delivered to ${labelOf(s, sender)}`, { agent: sender });
    }
    case 'ChildFailed':
      s = withAgent(s, p.name, (a) => ({ ...a, status: 'failed', error: p.error }));
      return note(s, e, 'failure', `${labelOf(s, p.name)} failed (${p.where}): ${p.error}`, { agent: p.name });
    case 'AgentRestarting':
      s = withAgent(s, p.name, (a) => ({ ...a, status: 'restarting' }));
      return note(s, e, 'restart', `${labelOf(s, p.name)} restarts in ${p.delay_s} s`, { agent: p.name });
    case 'AgentMarkedFailed':
      s = withAgent(s, p.name, (a) => ({ ...a, status: 'dead', error: p.reason }));
      return note(s, e, 'failure', `${labelOf(s, p.name)} is out: ${p.reason}`, { agent: p.name });
    case 'AgentExcluded':
      s = withAgent(s, p.name, (a) => ({ ...a, status: 'excluded', error: p.reason }));
      return note(s, e, 'failure', `${labelOf(s, p.name)} is left out of round ${p.round}: ${p.reason}`, { agent: p.name });
    case 'AgentRejoined':
      s = withAgent(s, p.name, (a) => ({ ...a, status: a.status === 'excluded' ? 'working' : a.status }));
      return note(s, e, 'restart', `${labelOf(s, p.name)} rejoins in round ${p.round}`, { agent: p.name });
    case 'DeadlineExpired':
      return note(s, e, 'deadline', `deadline (${p.scope}) ${p.name ? labelOf(s, p.name) + ' ' : ''}${p.detail}`);
    case 'CancelTurn':
      if (kind !== 'tell') return s;
      // The turn is over: a cancelled turn leaves the agent idle (answer-now hands it a vote-only turn next).
      return withAgent(s, agentOf(e.to), (a) => withTurn(
        { ...a, status: BUSY.has(a.status) && a.turns.some((t) => t.id === p.turn_id) ? 'idle' : a.status },
        p.turn_id, (t) => ({ ...t, outcome: t.outcome || `cancelled: ${p.reason}` })));
    case 'TurnCorrection':
      if (kind !== 'tell') return s;
      return withAgent(s, sender, (a) => withTurn(a, p.turn_id, (t) => ({ ...t, text: `${t.text}\n[correction: ${p.problem}]\n` })));
    case 'TurnFailed':
      return kind === 'tell' ? note(s, e, 'failure', `${labelOf(s, sender)}: ${p.reason}`, { agent: sender }) : s;
    case 'PresentFinal': {
      if (kind !== 'tell') return s;
      const agent = agentOf(e.to);
      s = withAgent({ ...s, phase: 'presenting' }, agent, (a) => ({
        ...a, status: 'presenting', since: e.ts, callingSince: null,
        turns: [...a.turns, { id: p.turn_id, kind: 'final presentation', view: [], text: '', reasoning: '', tools: [], outcome: null }],
      }));
      return note(s, e, 'present', `${labelOf(s, agent)} presents the final answer`, { agent });
    }
    case 'FinalPresented':
      return kind === 'tell' ? withAgent(s, sender, (a) => ({ ...a, status: 'done' })) : s;
    case 'RunFinished': {
      // The supervisor stops every agent with the run: whoever was still mid-turn (or between turns)
      // is stopped; an agent's last answer, vote, presentation or failure stays what it shows.
      const agents = {};
      // The winner's lane says so, whatever it did last (presented, or was stopped presenting).
      for (const [id, a] of Object.entries(s.agents)) {
        agents[id] = id === p.winner ? { ...a, status: 'winner' } : BUSY.has(a.status) ? { ...a, status: 'stopped' } : a;
      }
      s = { ...s, phase: 'finished', final: { ...p }, agents };
      return note(s, e, 'finish', `run ${p.status}: ${p.reason}`);
    }
    default:
      return s;
  }
}

// The seqs an entry stands for (a merged text entry stands for every delta in it).
export function seqsOf(e) {
  return e.parts ? e.parts.map(([seq]) => seq) : [e.seq];
}

export function foldTo(entries, limit = Infinity) {
  let s = initial();
  for (const e of entries) {
    if (e.seq > limit) break;
    s = apply(s, e, limit);
  }
  return s;
}

// What the judge decided, in words that say what happened (as the terminal's votes box says it):
// every vote, most votes, or a split its winner_rule settled; '' until the round converged.
export function decision(s) {
  const t = s.tally;
  if (!t || !t.converged || !t.winner) return '';
  const label = (s.agents[t.winner] || {}).label || t.winner;
  const counts = Object.values(t.counts);
  const total = counts.reduce((n, c) => n + c, 0);
  const won = t.counts[t.winner] || 0;
  if (total && won === total) return `consensus: ${label} (${won} of ${total} votes)`;
  if (won * 2 > total) return `majority: ${label} (${won} of ${total} votes)`;
  const split = [...counts].sort((a, b) => b - a).join('-') || 'no votes';
  const top = Math.max(0, ...counts);
  const rule = s.winnerRule || 'support';
  if (won === top && counts.filter((c) => c === top).length > 1) return `no majority (${split}): tie broken for ${label} by winner_rule ${rule}`;
  return `no majority (${split}): ${label} chosen by winner_rule ${rule}`;
}

// How the run ended, in the final panel's words. The trace's reason for a completed run is "the team
// converged" even where no answer had a majority and the judge's winner_rule picked among a split (a 1-1-1
// tie): there it says so, as the tally does.
export function finalReason(s) {
  const f = s.final;
  if (!f) return '';
  const decided = decision(s);
  if (f.status === 'completed' && decided.startsWith('no majority') && f.reason.startsWith('the team converged')) {
    const by = decided.includes('tie broken') ? 'the tie rule' : `winner_rule ${s.winnerRule || 'support'}`;
    return `decided by ${by}: ${decided}${f.reason.slice('the team converged'.length)}`;
  }
  return f.reason;
}

// "best so far": the trace says so (RunFinished.partial: a deadline, the budget or cancel ended the run
// before the team converged). After answer-now the team votes on what exists and may still converge.
export function bestSoFar(s) {
  return Boolean(s.final && s.final.partial);
}
