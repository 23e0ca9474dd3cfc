// Three days of Kong counters for test/scripts/usage-prometheus.test.ts, as OpenMetrics text for
// `promtool tsdb create-blocks-from openmetrics`: two Kong nodes scraped every 5 minutes from
// 2026-03-01T00:00Z to 2026-03-04T00:00Z, node a restarting on day 2. Every series exists (at 0)
// from the first scrape, and each request happens between two scrapes, so increase() over a
// window that starts and ends on a scrape is exact: the expected numbers below are the truth.

const HISTORY_START = Date.UTC(2026, 2, 1);
const HISTORY_END = Date.UTC(2026, 2, 4);
const SCRAPE_MS = 5 * 60_000;

type Node = 'kong-a:8100' | 'kong-b:8100';
type Event =
  /** On our service, or on another team's (`service: 'inventory'`, test/fixtures/team-inventory/kong.yml). */
  | { at: string; node: Node; consumer: string; code: number; n: number; service?: 'inventory' }
  | { at: string; node: Node; banned: string; n: number }
  | { at: string; node: Node; restart: true };

/** What happened, in UTC ("D2 12:02:30" is 2026-03-02T12:02:30Z). */
const EVENTS: Event[] = [
  { at: 'D1 09:00:30', node: 'kong-b:8100', consumer: 'bob', code: 201, n: 20 },
  { at: 'D1 10:00:30', node: 'kong-a:8100', consumer: 'alice', code: 200, n: 40 },
  { at: 'D1 11:00:30', node: 'kong-a:8100', consumer: 'alice', code: 404, n: 3 },
  { at: 'D1 12:00:30', node: 'kong-b:8100', consumer: 'alice', code: 429, n: 12 },
  { at: 'D1 13:00:30', node: 'kong-a:8100', consumer: 'animal-store-anonymous', code: 401, n: 5 },
  // Another team's on the same gateway, none of it ours: its consumer on its service and refused on
  // ours, a consumer of theirs since deleted, and alice on their service.
  { at: 'D1 14:00:30', node: 'kong-a:8100', consumer: 'inventory-warehouse', code: 200, n: 8, service: 'inventory' },
  { at: 'D2 09:00:30', node: 'kong-b:8100', consumer: 'inventory-warehouse', code: 403, n: 1 },
  { at: 'D2 10:00:30', node: 'kong-a:8100', consumer: 'inventory-gone', code: 200, n: 3, service: 'inventory' },
  { at: 'D3 02:00:30', node: 'kong-b:8100', consumer: 'alice', code: 200, n: 5, service: 'inventory' },
  { at: 'D2 08:00:30', node: 'kong-a:8100', consumer: 'alice', code: 200, n: 25 },
  { at: 'D2 12:02:30', node: 'kong-a:8100', restart: true },
  { at: 'D2 14:00:30', node: 'kong-a:8100', consumer: 'alice', code: 200, n: 15 },
  { at: 'D2 15:00:30', node: 'kong-b:8100', consumer: 'alice', code: 200, n: 10 },
  { at: 'D2 16:00:30', node: 'kong-b:8100', banned: 'bob', n: 30 },
  { at: 'D2 17:00:30', node: 'kong-a:8100', consumer: 'bob', code: 201, n: 8 },
  { at: 'D3 01:00:30', node: 'kong-b:8100', consumer: 'alice', code: 500, n: 2 },
  { at: 'D3 06:00:30', node: 'kong-a:8100', consumer: 'dave', code: 200, n: 4 },
  { at: 'D3 23:57:30', node: 'kong-b:8100', consumer: 'bob', code: 201, n: 100 },
];

const time = (at: string) => {
  const [day, clock] = at.split(' ') as [string, string];
  const [h, m, s] = clock.split(':').map(Number) as [number, number, number];
  return HISTORY_START + (Number(day.slice(1)) - 1) * 86_400_000 + ((h * 60 + m) * 60 + s) * 1000;
};

const escape = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labelText = (labels: Record<string, string>) =>
  `{${Object.entries(labels)
    .map(([k, v]) => `${k}="${escape(v)}"`)
    .join(',')}}`;

/** The history as OpenMetrics text, every series sampled every 5 minutes. */
export function historyOpenMetrics(): string {
  // series key → { family, labels, node }
  const requests = new Map<string, { labels: Record<string, string>; node: Node }>();
  const banned = new Map<string, { labels: Record<string, string>; node: Node }>();
  const requestLabels = (node: Node, consumer: string, code: number, service?: 'inventory') => ({
    service: service ?? 'animal-store-backend',
    route: service ? 'inventory-private' : 'animal-store-v1',
    code: String(code),
    source: code === 429 || code === 401 ? 'kong' : 'service',
    workspace: 'default',
    consumer,
    instance: node,
    job: 'kong',
  });
  const seriesOf = (event: Event): Array<[Map<string, { labels: Record<string, string>; node: Node }>, Record<string, string>]> => {
    if ('restart' in event) return [];
    if ('banned' in event) {
      // Kong counts a banned request too: 429, consumer "" (the ban is checked before key-auth).
      return [
        [banned, { consumer: event.banned, instance: event.node, job: 'kong' }],
        [requests, requestLabels(event.node, '', 429)],
      ];
    }
    return [[requests, requestLabels(event.node, event.consumer, event.code, event.service)]];
  };
  for (const event of EVENTS) for (const [map, labels] of seriesOf(event)) map.set(labelText(labels), { labels, node: event.node });
  const lines: string[] = [];
  for (const [family, map] of [
    ['kong_http_requests', requests],
    ['kong_animal_store_edge_banned_requests', banned],
  ] as const) {
    lines.push(`# TYPE ${family} counter`);
    for (const [key, { node }] of map) {
      let value = 0;
      let next = 0;
      const events = EVENTS.filter((e) => e.node === node).sort((a, b) => time(a.at) - time(b.at));
      for (let t = HISTORY_START; t <= HISTORY_END; t += SCRAPE_MS) {
        for (; next < events.length && time(events[next]!.at) <= t; next++) {
          const event = events[next]!;
          if ('restart' in event) value = 0;
          else if (seriesOf(event).some(([m, labels]) => m === map && labelText(labels) === key)) value += event.n;
        }
        lines.push(`${family}_total${key} ${value} ${t / 1000}`);
      }
    }
  }
  return `${lines.join('\n')}\n# EOF\n`;
}
