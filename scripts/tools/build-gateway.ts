import { mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CMD_DIR = fileURLToPath(new URL('../../gateway/local/cmd/', import.meta.url));

/**
 * Bundles the local gateway's two entry points into plain JavaScript beside their sources
 * (gateway/local/cmd/*.built.mjs, ignored by git), which `npm start`, `npm run start:cluster`,
 * `npm run start:gateway`, the bench and the fuzz run execute with node alone. Under tsx the
 * control plane's process is ~35 MB larger (the loader and esbuild's API stay resident), a quarter
 * of the gateway's memory budget. Beside the sources, import.meta.url-relative paths (the data
 * plane's directory) hold. npm packages stay external. ~100 ms, so every start rebuilds and none
 * runs a bundle older than the sources; built aside and renamed into place, so a gateway starting
 * meanwhile reads the old file or the new one.
 */
export async function buildGateway(): Promise<void> {
  const staging = mkdtempSync(join(CMD_DIR, '.build-'));
  // imported here: npm start's supervisor imports this module and builds once
  const { build } = await import('esbuild');
  try {
    await build({
      entryPoints: [join(CMD_DIR, 'start.ts'), join(CMD_DIR, 'cluster-start.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outdir: staging,
      outExtension: { '.js': '.built.mjs' },
      logLevel: 'warning',
    });
    for (const file of readdirSync(staging)) renameSync(join(staging, file), join(CMD_DIR, file));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildGateway();
