import { displayUrl, getText, ServerError } from './http.ts';

const TIMEOUT_MS = 30_000;
const MAX_BODY_BYTES = 64 * 2 ** 20;

export interface VectorSample {
  metric: Record<string, string>;
  value: number;
}

interface ApiAnswer {
  status?: string;
  error?: string;
  errorType?: string;
  data?: { resultType?: string; result?: Array<{ metric?: Record<string, string>; value?: [number, string] }> };
}

/** A string for PromQL: a double-quoted literal with `\` and `"` escaped (a label value, say). */
export const promqlString = (value: string) => JSON.stringify(value);

/** Prometheus's HTTP API (/api/v1), the instant queries usage needs. */
export class PrometheusApi {
  constructor(private readonly base: URL) {}

  get displayUrl(): string {
    return displayUrl(this.base);
  }

  /** An instant query evaluated at `time`; the result must be a vector. */
  async query(promql: string, time: Date): Promise<VectorSample[]> {
    const url = new URL(this.base);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/api/v1/query`;
    url.search = new URLSearchParams({ query: promql, time: (time.getTime() / 1000).toFixed(3) }).toString();
    const what = `Prometheus at ${this.displayUrl}`;
    const { status, body } = await getText(url, what, { timeoutMs: TIMEOUT_MS, maxBytes: MAX_BODY_BYTES });
    let answer: ApiAnswer;
    try {
      answer = JSON.parse(body) as ApiAnswer;
    } catch {
      throw new ServerError(`${what} answered ${status} without Prometheus's JSON: is it a Prometheus server?`);
    }
    if (answer.status !== 'success') {
      throw new ServerError(`${what} answered ${status}: ${answer.errorType ?? 'error'}: ${answer.error ?? 'no reason given'}`);
    }
    if (answer.data?.resultType !== 'vector' || !Array.isArray(answer.data.result)) {
      throw new ServerError(`${what} answered a ${String(answer.data?.resultType)} where a vector was expected`);
    }
    return answer.data.result.map((sample) => {
      const value = Number(sample.value?.[1]);
      if (!Number.isFinite(value)) throw new ServerError(`${what} answered a value that is not a finite number: ${String(sample.value?.[1])}`);
      return { metric: sample.metric ?? {}, value };
    });
  }
}
