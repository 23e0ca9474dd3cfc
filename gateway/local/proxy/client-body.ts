import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestBody } from './request-context.ts';
import { StreamedBody } from './upstream-request.ts';

/**
 * The client's body cannot be read: the parser rejected it (400, e.g. a bad chunk size), it came
 * too slowly (408, client_body_timeout), or the client left. nginx finalizes the request with
 * `status`, which error_page hands to Kong.handle_error.
 */
export class ClientBodyError extends Error {
  constructor(message: string, readonly status: 400 | 408 = 400) {
    super(message);
  }
}

/**
 * The client's request body, read only when someone needs it: streamed to the upstream as it
 * arrives, or read whole (up to a bound) when a plugin asks for it. `100 Continue` goes out when
 * the body is first read, as nginx sends it (ngx_http_read_client_request_body).
 */
export class ClientBody implements RequestBody {
  readonly declaredLength: number | undefined;
  readonly chunked: boolean;
  /** The whole body, once a plugin read it. */
  buffered?: Buffer;
  private failure?: ClientBodyError;
  private streamed?: StreamedBody;
  private continued = false;
  private touched = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly expectsContinue: boolean,
  ) {
    const length = req.headers['content-length'];
    this.declaredLength = length === undefined ? undefined : Number(length);
    this.chunked = req.headers['transfer-encoding'] !== undefined;
    req.on('error', () => undefined);
  }

  /** The request has a body at all. */
  get present(): boolean {
    return this.chunked || (this.declaredLength !== undefined && this.declaredLength > 0);
  }

  /** Some of the body was read (it cannot be left for the next request's parser). */
  get started(): boolean {
    return this.touched || (this.streamed?.started ?? false);
  }

  /** The client was told to go on, or never asked. */
  get clientWaitsForContinue(): boolean {
    return this.expectsContinue && !this.continued;
  }

  get failed(): ClientBodyError | undefined {
    return this.failure;
  }

  /** The HTTP parser rejected the rest of this body: whoever reads it gets a ClientBodyError. */
  fail(error: ClientBodyError): void {
    this.failure = error;
    this.req.emit('error', error);
  }

  private sendContinue(): void {
    if (this.expectsContinue && !this.continued) {
      this.continued = true;
      this.res.writeContinue();
    }
  }

  async read(limit: number): Promise<{ body: Buffer; exceeded: boolean }> {
    if (this.buffered) return { body: this.buffered, exceeded: this.buffered.length > limit };
    if (this.failure) throw this.failure;
    if (!this.present) return { body: Buffer.alloc(0), exceeded: false };
    this.touched = true;
    this.sendContinue();
    const { req } = this;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const cleanup = () => {
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', onError);
        req.off('aborted', onAborted);
      };
      const onData = (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size > limit) {
          cleanup();
          req.pause();
          resolve({ body: Buffer.concat(chunks), exceeded: true });
        }
      };
      const onEnd = () => {
        cleanup();
        this.buffered = Buffer.concat(chunks);
        resolve({ body: this.buffered, exceeded: false });
      };
      const onError = (error: Error) => {
        cleanup();
        reject(error instanceof ClientBodyError ? error : new ClientBodyError(`reading the request body: ${error.message}`));
      };
      const onAborted = () => onError(new ClientBodyError('client closed the connection while sending the body'));
      req.on('data', onData);
      req.once('end', onEnd);
      req.once('error', onError);
      req.once('aborted', onAborted);
      if (req.readableEnded) onEnd();
    });
  }

  /** The body for the upstream: what a plugin read, or a stream pulled from the client. */
  forUpstream(): Buffer | StreamedBody | undefined {
    if (this.buffered) return this.buffered;
    if (!this.present) return undefined;
    this.streamed ??= new StreamedBody(this.req, () => this.sendContinue(), () => this.failure);
    return this.streamed;
  }
}
