import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { ServerStatus } from './node-routes.ts';

/**
 * nginx's stub_status counters (what Kong's /status reports as `server`) for the Admin API's own
 * HTTP server, where no data-plane node runs beside it (a control plane): connections accepted
 * (each handled), open, and with a request in flight (`writing`, the asking one included) or idle
 * (`waiting`); requests, the asking one included. Node does not say when a connection is still
 * reading a request's headers: `reading` stays 0.
 */
export class ServerCounters {
  private accepted = 0;
  private requests = 0;
  private inFlight = 0;
  private readonly open = new Set<Socket>();

  watch(server: Server): void {
    server.on('connection', (socket: Socket) => {
      this.accepted += 1;
      this.open.add(socket);
      socket.once('close', () => this.open.delete(socket));
    });
    // before the app's own listener, so that a request counts itself
    server.prependListener('request', (_request, response) => {
      this.requests += 1;
      this.inFlight += 1;
      response.once('close', () => (this.inFlight -= 1));
    });
  }

  status(): ServerStatus {
    const writing = Math.min(this.inFlight, this.open.size);
    return {
      connections_accepted: this.accepted,
      connections_active: this.open.size,
      connections_handled: this.accepted,
      connections_reading: 0,
      connections_writing: writing,
      connections_waiting: this.open.size - writing,
      total_requests: this.requests,
    };
  }
}
