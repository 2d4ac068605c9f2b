//! The report as one self-contained HTML page: the numbers embedded as JSON, drawn by inline
//! JavaScript as SVG charts (commands, p99 lapse and writer wait per minute) and tables. It
//! fetches nothing. Once drawn, each chart's `<svg>` carries `data-points` (how many points
//! it drew) and the body `data-drawn` (how many charts), which the tests read back.

use super::summary::Summary;

const STYLE: &str = r#"
body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.chart { border: 1px solid #ccc; background: #fafafa; }
table { border-collapse: collapse; margin-top: 6px; }
td, th { padding: 2px 10px; border-bottom: 1px solid #eee; text-align: right; }
td:first-child, th:first-child { text-align: left; }
"#;

const SCRIPT: &str = r#"
const data = JSON.parse(document.getElementById('data').textContent);
const NS = 'http://www.w3.org/2000/svg';
function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function chart(id, title, key, color) {
  const W = 400, H = 200, L = 50, B = 30, T = 24;
  const svg = el('svg', { id: id, class: 'chart', width: W, height: H, viewBox: `0 0 ${W} ${H}` });
  document.getElementById('charts').appendChild(svg);
  const t = el('text', { x: 8, y: 16, 'font-size': 13 }, svg); t.textContent = title;
  const pts = data.minutes.map(m => m[key]);
  const max = Math.max(1e-9, ...pts);
  el('line', { x1: L, y1: H - B, x2: W - 8, y2: H - B, stroke: '#888' }, svg);
  el('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#888' }, svg);
  const top = el('text', { x: 4, y: T + 10, 'font-size': 10 }, svg); top.textContent = max.toFixed(1);
  const n = pts.length;
  const x = i => L + (n <= 1 ? (W - L - 8) / 2 : i * (W - L - 8) / (n - 1));
  const y = v => H - B - (v / max) * (H - B - T);
  if (n > 0) {
    const d = pts.map((v, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    el('path', { d: d, fill: 'none', stroke: color, 'stroke-width': 2 }, svg);
    pts.forEach((v, i) => el('circle', { cx: x(i), cy: y(v), r: 3, fill: color }, svg));
    const a = el('text', { x: L, y: H - 10, 'font-size': 10 }, svg); a.textContent = data.minutes[0].minute;
    const b = el('text', { x: W - 100, y: H - 10, 'font-size': 10 }, svg); b.textContent = data.minutes[n - 1].minute;
  }
  svg.dataset.points = n;
}
function table(parent, title, rows, cols) {
  const h = document.createElement('h2'); h.textContent = title; parent.appendChild(h);
  const t = document.createElement('table'); parent.appendChild(t);
  const head = t.insertRow();
  cols.forEach(c => { const th = document.createElement('th'); th.textContent = c; head.appendChild(th); });
  rows.forEach(r => {
    const tr = t.insertRow();
    cols.forEach(c => {
      const v = r[c];
      tr.insertCell().textContent = typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(1) : v;
    });
  });
}
document.getElementById('head').textContent =
  `${data.commands} commands from ${data.first || '-'} to ${data.last || '-'}`;
chart('chart-commands', 'Commands per minute', 'commands', '#1f77b4');
chart('chart-p99', 'p99 lapse per minute (ms)', 'p99_ms', '#d62728');
chart('chart-wait', 'Writer wait per minute (ms)', 'writer_wait_ms', '#2ca02c');
const tables = document.getElementById('tables');
const groups = ['name', 'count', 'total_ms', 'peak_ms', 'writer_wait_ms', 'writer_hold_ms', 'rows_read', 'rows_written', 'bytes', 'errors'];
table(tables, 'Commands by total time', data.by_total, groups);
table(tables, 'Commands by peak time', data.by_peak, groups);
table(tables, 'Slowest commands', data.slowest, ['time', 'id', 'user', 'workspace', 'command', 'args', 'lapse_ms', 'writer_wait_ms']);
table(tables, 'Users by total time', data.by_user, groups);
table(tables, 'Workspaces by total time', data.by_workspace, groups);
table(tables, 'Writer wait and hold by command', data.writer_by_command, groups);
table(tables, 'Errors', data.errors, ['command', 'code', 'error', 'count']);
document.body.dataset.drawn = document.querySelectorAll('svg.chart').length;
"#;

/// The page for `summary`.
pub fn page(summary: &Summary) -> String {
    // Inside <script>, `</` could end the element early: JSON allows `<\/` for it.
    let json = serde_json::to_string(summary)
        .unwrap_or_else(|_| "{}".into())
        .replace("</", "<\\/");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Keel command log report</title><style>{STYLE}</style></head>\n<body>\
         <h1>Keel command log report</h1><p id=\"head\"></p>\
         <div id=\"charts\" class=\"charts\"></div><div id=\"tables\"></div>\n\
         <script type=\"application/json\" id=\"data\">{json}</script>\n\
         <script>{SCRIPT}</script>\n</body></html>\n"
    )
}
