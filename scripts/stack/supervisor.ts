import { spawn, type ChildProcess } from 'node:child_process';

export interface ChildSpec {
  /** How the child is named in what the supervisor prints: `backend`, `gateway`. */
  name: string;
  nodeArgs: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export interface RunningChild<Ready> {
  name: string;
  pid: number;
  /** What the child sent as `{ ready }` over the IPC channel once it was serving. */
  ready: Ready;
}

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** The child exited before it said it was ready. It has printed why itself (one line), unless it died by a signal. */
export class StartFailed extends Error {
  constructor(
    readonly child: string,
    readonly exit: Exit,
  ) {
    super(`${child} exited before it was ready (${describeExit(exit)})`);
  }
}

export function describeExit({ code, signal }: Exit): string {
  return signal ? `killed by ${signal}` : `exit code ${code}`;
}

interface Entry {
  name: string;
  child: ChildProcess;
  exited: Promise<Exit>;
  exit?: Exit;
}

/**
 * Runs node processes that must live and die together, as `npm start` runs the backend and the
 * gateway. Each child gets its own process group, so a terminal's Ctrl-C reaches only the
 * supervisor, which then stops the children one by one, last started first. A child that dies
 * on its own is reported and the others are stopped: no restart, so a crash stays visible instead
 * of looping (production restarts are the orchestrator's job). Children stop by themselves when
 * the IPC channel closes, i.e. when the supervisor is gone, even by kill -9.
 */
export class Supervisor {
  private readonly entries: Entry[] = [];
  private stopping: Promise<boolean> | undefined;

  constructor(
    private readonly say: (line: string) => void,
    /** Called once when a child that was serving dies unrequested, after the others are stopped. */
    private readonly onChildDied: (name: string, exit: Exit) => void,
    private readonly graceMs = 10_000,
  ) {}

  start<Ready>(spec: ChildSpec): Promise<RunningChild<Ready>> {
    const child = spawn(process.execPath, spec.nodeArgs, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      detached: true,
    });
    const entry: Entry = {
      name: spec.name,
      child,
      exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve((entry.exit = { code, signal })))),
    };
    this.entries.push(entry);
    return new Promise((resolve, reject) => {
      let ready = false;
      child.on('message', (message: { ready?: Ready }) => {
        if (ready || message.ready === undefined) return;
        ready = true;
        resolve({ name: spec.name, pid: child.pid!, ready: message.ready });
      });
      void entry.exited.then((exit) => {
        if (!ready) return reject(new StartFailed(spec.name, exit));
        if (this.stopping) return;
        this.say(`[stack] ${spec.name} (pid ${child.pid}) stopped unexpectedly (${describeExit(exit)}); stopping the rest`);
        void this.stop().then(() => this.onChildDied(spec.name, exit));
      });
    });
  }

  /** Stops every child, last started first; true when each exited with code 0. Idempotent. */
  stop(): Promise<boolean> {
    this.stopping ??= (async () => {
      let clean = true;
      for (const entry of [...this.entries].reverse()) {
        if (!entry.exit) {
          entry.child.kill('SIGTERM');
          const timer = setTimeout(() => {
            this.say(`[stack] ${entry.name} (pid ${entry.child.pid}) did not stop within ${this.graceMs} ms: SIGKILL`);
            entry.child.kill('SIGKILL');
          }, this.graceMs);
          await entry.exited;
          clearTimeout(timer);
        }
        clean &&= entry.exit!.code === 0;
      }
      return clean;
    })();
    return this.stopping;
  }
}
