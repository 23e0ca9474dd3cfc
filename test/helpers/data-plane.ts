import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startDataPlaneNode, type DataPlaneNode, type DataPlaneNodeOptions } from '../../gateway/local/data-plane-entry.ts';
import { REPO_ROOT } from './process.ts';
import { buildSnapshot, type Snapshot, type SnapshotInput } from './snapshot-builder.ts';

/** test/fixtures/plugins: plugins written for tests (pdk-probe…), loaded as custom plugins. */
export const FIXTURE_PLUGINS_DIR = join(REPO_ROOT, 'test', 'fixtures', 'plugins');

export interface TestNode extends DataPlaneNode {
  /** The proxy URL joined with `path`. */
  url(path: string): string;
  /** The log lines matching `pattern` so far. */
  logsMatching(pattern: RegExp): string[];
  dispose(): Promise<void>;
}

/**
 * A data-plane node on an ephemeral loopback port running a static snapshot (no control plane
 * unless one is given), in a prefix of its own that dispose() removes.
 */
export async function startTestNode(
  options: Omit<DataPlaneNodeOptions, 'snapshot'> & { snapshot?: Snapshot | SnapshotInput } = {},
): Promise<TestNode> {
  const { snapshot, ...rest } = options;
  const built = snapshot === undefined ? undefined : 'snapshot_version' in snapshot ? snapshot : buildSnapshot(snapshot);
  const node = await startDataPlaneNode({
    workerProcesses: 1,
    pluginsDir: FIXTURE_PLUGINS_DIR,
    sharedDicts: ['animal_store_edge 10m'],
    logLevel: 'info',
    ...rest,
    snapshot: built,
  });
  return Object.assign(node, {
    url: (path: string) => `${node.proxyUrl}${path}`,
    logsMatching: (pattern: RegExp) => node.logs.filter((line) => pattern.test(line)),
    async dispose() {
      await node.stop();
      if (!options.prefix) rmSync(node.prefix, { recursive: true, force: true });
    },
  });
}
