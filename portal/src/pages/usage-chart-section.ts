import { html } from '../html.ts';
import { BASE } from '../paths.ts';
import { CHART_RANGES } from '../../../packages/usage/index.ts';

/**
 * The two charts of the account's requests by status class: uPlot (served by the portal, no CDN)
 * draws them from GET usage/requests.json in assets/usage-chart.js, as the CSP allows no inline
 * script; each chart's totals are written under it as text.
 */
export function usageChartSection() {
  return html`<div class="usage-charts" data-usage-charts="${BASE}/usage/requests.json">
${CHART_RANGES.map(
  (range) => html`<figure class="usage-chart">
<figcaption id="chart-${range.id}-caption">Requests by status, ${range.label.charAt(0).toLowerCase()}${range.label.slice(1)}</figcaption>
<div class="chart" data-chart="${range.id}"></div>
<p class="hint" data-chart-totals="${range.id}"></p>
</figure>`,
)}
<p class="hint" data-chart-note>Loading the charts…</p>
</div>
<link rel="stylesheet" href="${BASE}/assets/uPlot.min.css">
<script src="${BASE}/assets/uPlot.iife.min.js" defer></script>
<script src="${BASE}/assets/usage-chart.js" defer></script>`;
}
