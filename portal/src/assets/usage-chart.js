/* global document, fetch, uPlot */
// The dashboard's usage charts (pages/usage-chart-section.ts): the account's buckets from
// usage/requests.json, drawn with uPlot; a file of its own, as the Content-Security-Policy allows no inline script.
const CLASSES = [
  ['2xx', '2xx', '#2e7d32'],
  ['4xx', '4xx (not 429)', '#b35c00'],
  ['429', '429 (plan limit)', '#c62828'],
  ['5xx', '5xx', '#6a1b9a'],
  ['other', '1xx and 3xx', '#455a64'],
  ['banned', 'refused while banned', '#000000'],
];
/** Always drawn; the others only when they have requests. */
const ALWAYS = new Set(['2xx', '4xx', '429']);

function draw(box, totals, range) {
  const shown = CLASSES.filter(([key]) => ALWAYS.has(key) || range.buckets.some((bucket) => bucket.counts[key] > 0));
  const times = range.buckets.map((bucket) => bucket.from / 1000);
  const data = [times, ...shown.map(([key]) => range.buckets.map((bucket) => bucket.counts[key]))];
  const chart = new uPlot(
    {
      width: Math.max(280, Math.min(box.clientWidth || 640, 900)),
      height: 220,
      // UTC, as the buckets (hours, UTC days) and the plan's day are
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      series: [{ label: 'Time' }, ...shown.map(([, label, stroke]) => ({ label, stroke, width: 2, points: { show: true } }))],
    },
    data,
    box,
  );
  const sums = shown.map(([key, label]) => `${label} ${range.buckets.reduce((sum, bucket) => sum + bucket.counts[key], 0)}`);
  const all = range.buckets.reduce((sum, bucket) => sum + bucket.counts.requests, 0);
  totals.textContent = `In all: ${all} request${all === 1 ? '' : 's'} (${sums.join(', ')}).`;
  const canvas = chart.root.querySelector('canvas');
  if (canvas) {
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `${range.label}: ${totals.textContent}`);
  }
}

async function load(root) {
  const note = root.querySelector('[data-chart-note]');
  let body;
  try {
    const response = await fetch(root.getAttribute('data-usage-charts'), { credentials: 'same-origin', headers: { accept: 'application/json' } });
    body = await response.json();
    if (!response.ok) throw new Error(body.message);
  } catch (error) {
    note.textContent = `The charts are not available: ${error.message}`;
    root.setAttribute('data-charts', 'failed');
    return;
  }
  note.textContent = body.note;
  for (const range of body.ranges) {
    const box = root.querySelector(`[data-chart="${range.range}"]`);
    const totals = root.querySelector(`[data-chart-totals="${range.range}"]`);
    if (box && totals) draw(box, totals, range);
  }
  root.setAttribute('data-charts', 'drawn');
}

const root = document.querySelector('[data-usage-charts]');
if (root) void load(root);
