import { startGateway } from '../../gateway/local/gateway.ts';
import { readGatewaySettings } from '../../gateway/local/settings.ts';

/** A local gateway alone, for the benchmark: its own process, as Kong would be. */
const gateway = await startGateway({ ...readGatewaySettings(), log: (level, message) => level === 'err' && console.error(message) });
console.log(`gateway ready ${gateway.proxyUrl} ${gateway.adminUrl}`);
process.once('SIGTERM', async () => {
  await gateway.close();
  process.exit(0);
});
