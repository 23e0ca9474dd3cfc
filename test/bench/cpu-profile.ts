import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  /** Self time in µs per request of the load that ran while the profile was taken. */
  microsPerRequest: number;
  /** Percent of the busy (non-idle) time. */
  share: number;
}

/** The functions with the most self time in a V8 .cpuprofile, by name and location; idle time left out. */
export function topSelfTime(file: string, requests: number, count = 25): SelfTime[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = url ? `${url.replace(/^.*\/(node_modules|gateway|test)\//, '$1/')}:${lineNumber + 1}` : '';
    const name = `${functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    const delta = profile.timeDeltas[i] ?? 0;
    if (name === '(idle)') return;
    totals.set(name, (totals.get(name) ?? 0) + delta);
    all += delta;
  });
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => ({
      name,
      microsPerRequest: Math.round((micros / requests) * 10) / 10,
      share: Math.round((micros / all) * 1000) / 10,
    }));
}
