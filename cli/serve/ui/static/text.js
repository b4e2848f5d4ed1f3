// Model text on the page: a safe Markdown subset built as elements (never innerHTML), and word diffs.
import { h } from './vendor/preact-htm.js';

// How much of one text the page lays out: Chromium takes seconds to wrap one unbroken "word" of tens of
// thousands of characters (minutes for a megabyte), so every place that shows model text shows its first
// CAP characters, says so, and offers the whole as a download (app.js `Long`).
export const CAP = 20000;

export function clip(text, cap = CAP) {
  const s = String(text ?? '');
  return s.length > cap ? { shown: s.slice(0, cap), total: s.length, whole: false } : { shown: s, total: s.length, whole: true };
}

// Break opportunities (<wbr>, no characters: copying is unchanged) every `every` characters of a run
// without spaces, so a long token wraps at once instead of being measured letter by letter.
export function breakable(text, every = 40) {
  const s = String(text ?? '');
  const long = new RegExp(`\\S{${every + 1},}`, 'g');
  const out = [];
  let at = 0;
  let m;
  while ((m = long.exec(s)) !== null) {
    if (m.index > at) out.push(s.slice(at, m.index));
    for (let i = 0; i < m[0].length; i += every) {
      if (i) out.push(h('wbr', null));
      out.push(m[0].slice(i, i + every));
    }
    at = m.index + m[0].length;
  }
  if (at < s.length) out.push(s.slice(at));
  return out.length === 1 ? out[0] : out;
}

function inline(text, key) {
  const out = [];
  const re = /(`[^`\n]+`|\*\*[^*\n]+\*\*|\*[^*\n]+\*)/g;
  let at = 0;
  let m;
  let i = 0;
  while ((m = re.exec(text)) !== null) {
    if (m.index > at) out.push(breakable(text.slice(at, m.index)));
    const tok = m[0];
    if (tok.startsWith('`')) out.push(h('code', { key: `${key}-${i++}` }, tok.slice(1, -1)));
    else if (tok.startsWith('**')) out.push(h('strong', { key: `${key}-${i++}` }, breakable(tok.slice(2, -2))));
    else out.push(h('em', { key: `${key}-${i++}` }, breakable(tok.slice(1, -1))));
    at = m.index + tok.length;
  }
  if (at < text.length) out.push(breakable(text.slice(at)));
  return out;
}

// Paragraphs, headings, bullet and numbered lists, fenced code, inline code, bold, italics.
export function markdown(text) {
  const blocks = [];
  const lines = String(text || '').split('\n');
  let para = [];
  let list = null;
  const flushPara = () => { if (para.length) blocks.push(h('p', null, inline(para.join('\n'), blocks.length))); para = []; };
  const flushList = () => { if (list) blocks.push(h(list.tag, null, list.items)); list = null; };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('```')) {
      flushPara(); flushList();
      const code = [];
      for (i += 1; i < lines.length && !lines[i].startsWith('```'); i++) code.push(lines[i]);
      blocks.push(h('pre', null, h('code', null, code.join('\n'))));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const bullet = /^\s*[-*]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    if (heading) { flushPara(); flushList(); blocks.push(h('h4', null, inline(heading[2], blocks.length))); }
    else if (bullet || numbered) {
      flushPara();
      const tag = bullet ? 'ul' : 'ol';
      if (!list || list.tag !== tag) { flushList(); list = { tag, items: [] }; }
      list.items.push(h('li', null, inline((bullet || numbered)[1], `${blocks.length}-${list.items.length}`)));
    } else if (!line.trim()) { flushPara(); flushList(); }
    else { flushList(); para.push(line); }
  }
  flushPara(); flushList();
  return h('div', { class: 'md' }, blocks);
}

// Word diff (longest common subsequence over words and the spaces between them).
export function wordDiff(a, b) {
  const x = String(a || '').split(/(\s+)/).filter(Boolean);
  const y = String(b || '').split(/(\s+)/).filter(Boolean);
  if (x.length * y.length > 4e6) return [['del', a], ['ins', b]];
  const n = x.length; const m = y.length;
  const dp = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
    dp[i][j] = x[i] === y[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  }
  const out = [];
  const push = (op, t) => { if (out.length && out[out.length - 1][0] === op) out[out.length - 1][1] += t; else out.push([op, t]); };
  let i = 0; let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { push('same', x[i]); i++; j++; }
    else if (dp[i + 1][j] >= dp[i][j + 1]) push('del', x[i++]);
    else push('ins', y[j++]);
  }
  while (i < n) push('del', x[i++]);
  while (j < m) push('ins', y[j++]);
  return out;
}
