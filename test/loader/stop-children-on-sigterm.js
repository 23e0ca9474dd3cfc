// ava stops the worker of a file that timed out with SIGTERM (ava/lib/fork.js: `worker.kill()`),
// and node's default for SIGTERM ends the process at once: its tests' teardown never runs, and the
// servers they started (nginx, `npm start`'s stacks, Redis, Prometheus…) would keep running with no
// parent, loading the machine for every later file. The worker passes the SIGTERM on to each of
// its descendants first. (A PostgreSQL started by pg_ctl is the postmaster's own daemon, not one.)
import { readdirSync, readFileSync } from 'node:fs';
import process from 'node:process';

/** pid → parent pid of every process `/proc` shows. */
function parents() {
  const parentOf = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ")"
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended while being read
    }
  }
  return parentOf;
}

function descendantsOf(pid) {
  const parentOf = parents();
  const found = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift();
    for (const [child, ppid] of parentOf) {
      if (ppid === parent) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

process.once('SIGTERM', () => {
  for (const pid of descendantsOf(process.pid)) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  process.exit(128 + 15);
});
