import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A file of `shared/` kept beside the repository (Kong's Admin API OpenAPI document, its plugin
 * schemas, the Compose Specification schema), or undefined when absent, as in any user's clone.
 * Looked for in ../shared, then further up: a git worktree sits deeper than its clone.
 */
export function findSharedFile(relative: string): string | undefined {
  for (let dir = dirname(REPOSITORY); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dir, 'shared', relative);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}
