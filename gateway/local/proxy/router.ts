import type { Route, Service } from '../control-plane/db/entities.ts';

// Route matching as Kong 3.9.1's default `traditional_compatible` router does it
// (kong/router/atc.lua, kong/router/transform.lua get_priority): a route is split into one
// candidate per group of paths (all regex paths together, prefix paths by length) and candidates
// are tried from the highest 64-bit priority down.

export interface RouteMatch {
  route: Route;
  service: Service;
  /** The part of the path the route matched (stripped when strip_path is true). */
  matchedPath: string;
  captures?: Record<string, string>;
}

interface Candidate {
  route: Route;
  service: Service;
  priority: bigint;
  prefixes?: string[];
  regexes?: RegExp[];
  methods?: Set<string>;
  hosts?: Array<(host: string) => boolean>;
  headers?: Array<[string, Set<string>]>;
}

const bit = (n: number) => 1n << BigInt(n);

function priorityOf(route: Route, paths: string[] | undefined): bigint {
  let matchWeight = 0;
  if (route.methods?.length) matchWeight += 1;
  if (route.hosts?.length) matchWeight += 1;
  const headersCount = route.headers ? Math.min(Object.keys(route.headers).length, 255) : 0;
  if (headersCount > 0) matchWeight += 1;
  const plainHostOnly = Array.isArray(route.hosts) && route.hosts.every((h) => !h.includes('*'));
  let uriLength = 0;
  let regexUrl = false;
  if (paths?.length) {
    matchWeight += 1;
    if (paths[0]!.startsWith('~')) regexUrl = true;
    else uriLength = paths[0]!.length;
  }
  let priority = BigInt(matchWeight) << 61n;
  if (plainHostOnly) priority |= bit(60);
  if (regexUrl) priority |= bit(51);
  priority |= BigInt(headersCount) << 52n;
  priority |= BigInt(regexUrl ? route.regex_priority : 0) << 19n;
  priority |= BigInt(uriLength & 0x7ffff);
  return priority;
}

/** transform.lua split_routes_and_services_by_path: regex paths in one group, prefixes by length. */
function groupPaths(paths: string[]): string[][] {
  const groups = new Map<number, string[]>();
  for (const path of paths) {
    const key = path.startsWith('~') ? 0 : path.length;
    groups.set(key, [...(groups.get(key) ?? []), path]);
  }
  return [...groups.values()];
}

/** `~/pets/(?<id>\d+)$` → an anchored JS RegExp (named groups are written the same way). */
export function compilePathRegex(path: string): RegExp {
  return new RegExp(`^${path.slice(1).replaceAll('(?P<', '(?<')}`);
}

function hostMatcher(pattern: string): (host: string) => boolean {
  const p = pattern.toLowerCase();
  if (p.startsWith('*.')) return (host) => host.endsWith(p.slice(1)) && host.length > p.length - 1;
  if (p.endsWith('.*')) return (host) => host.startsWith(p.slice(0, -1)) && host.length > p.length - 1;
  return (host) => host === p;
}

export class Router {
  private readonly candidates: Candidate[];

  constructor(routes: Route[], services: Map<string, Service>) {
    const candidates: Array<Candidate & { order: number }> = [];
    routes.forEach((route, order) => {
      const service = route.service ? services.get(route.service.id) : undefined;
      if (!service || !service.enabled) return;
      const base = {
        route,
        service,
        order,
        methods: route.methods?.length ? new Set(route.methods.map((m) => m.toUpperCase())) : undefined,
        hosts: route.hosts?.length ? route.hosts.map(hostMatcher) : undefined,
        headers: route.headers
          ? Object.entries(route.headers).map(
              ([name, values]) => [name.toLowerCase(), new Set(values.map((v) => v.toLowerCase()))] as [string, Set<string>],
            )
          : undefined,
      };
      const groups = route.paths?.length ? groupPaths(route.paths) : [undefined];
      for (const group of groups) {
        candidates.push({
          ...base,
          priority: priorityOf(route, group),
          prefixes: group && !group[0]!.startsWith('~') ? group : undefined,
          regexes: group && group[0]!.startsWith('~') ? group.map(compilePathRegex) : undefined,
        });
      }
    });
    candidates.sort((a, b) => (a.priority === b.priority ? a.order - b.order : a.priority > b.priority ? -1 : 1));
    this.candidates = candidates;
  }

  /** `path` is the normalized request path without its query string. */
  match(request: { method: string; path: string; host: string; headers: Map<string, string | string[]> }): RouteMatch | undefined {
    const host = request.host.toLowerCase().replace(/:\d+$/, '');
    for (const candidate of this.candidates) {
      if (candidate.methods && !candidate.methods.has(request.method)) continue;
      if (candidate.hosts && !candidate.hosts.some((matches) => matches(host))) continue;
      if (candidate.headers && !candidate.headers.every(([name, values]) => headerMatches(request.headers.get(name), values))) continue;
      if (candidate.prefixes) {
        const prefix = candidate.prefixes.find((p) => request.path.startsWith(p));
        if (prefix === undefined) continue;
        return { route: candidate.route, service: candidate.service, matchedPath: prefix };
      }
      if (candidate.regexes) {
        for (const regex of candidate.regexes) {
          const m = regex.exec(request.path);
          if (m) return { route: candidate.route, service: candidate.service, matchedPath: m[0], captures: m.groups };
        }
        continue;
      }
      return { route: candidate.route, service: candidate.service, matchedPath: '/' };
    }
    return undefined;
  }
}

function headerMatches(value: string | string[] | undefined, expected: Set<string>): boolean {
  if (value === undefined) return false;
  return (Array.isArray(value) ? value : [value]).some((v) => expected.has(v.toLowerCase()));
}
