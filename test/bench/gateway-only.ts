import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { startGateway } from '../../gateway/local/gateway.ts';
import { readGatewaySettings } from '../../gateway/local/settings.ts';

/** A local gateway alone, for the benchmark: its own process, as Kong would be. */
const gateway = await startGateway({ ...readGatewaySettings(), log: (level, message) => level === 'err' && console.error(message) });
console.log(`gateway ready ${gateway.proxyUrl} ${gateway.adminUrl} ${gateway.runtime.lua.vm.kind}`);

// BENCH_PROFILE_FILE: SIGUSR2 starts V8's CPU profiler, the next SIGUSR2 writes the profile there,
// so that the profile covers one load run and nothing of start-up.
const profileFile = process.env.BENCH_PROFILE_FILE;
if (profileFile) {
  const session = new Session();
  session.connect();
  let profiling = false;
  process.on('SIGUSR2', async () => {
    if (!profiling) {
      await session.post('Profiler.enable');
      // 250 µs rather than V8's default 1 ms: a few thousand samples per second of load.
      await session.post('Profiler.setSamplingInterval', { interval: 250 });
      await session.post('Profiler.start');
      profiling = true;
      console.log('profiling started');
    } else {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(profileFile, JSON.stringify(profile));
      profiling = false;
      console.log(`profile written ${profileFile}`);
    }
  });
}

process.once('SIGTERM', async () => {
  await gateway.close();
  process.exit(0);
});
