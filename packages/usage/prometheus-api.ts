import { displayUrl, getText, ServerError } from './http.ts';

const TIMEOUT_MS = 30_000;
const MAX_BODY_BYTES = 64 * 2 ** 20;

export interface VectorSample {
  metric: Record<string, string>;
  value: number;
}

export interface MatrixSeries {
  metric: Record<string, string>;
  /** [unix seconds, value] at each step where the expression had a value. */
  values: Array<[number, number]>;
}

interface ApiAnswer {
  status?: string;
  error?: string;
  errorType?: string;
  data?: {
    resultType?: string;
    result?: Array<{ metric?: Record<string, string>; value?: [number, string]; values?: Array<[number, string]> }>;
  };
}

/** A string for PromQL: a double-quoted literal with `\` and `"` escaped (a label value, say). */
export const promqlString = (value: string) => JSON.stringify(value);

const seconds = (time: Date) => (time.getTime() / 1000).toFixed(3);

/** Prometheus's HTTP API (/api/v1): the instant queries usage needs, and the range queries of the portal's charts. */
export class PrometheusApi {
  constructor(private readonly base: URL) {}

  get displayUrl(): string {
    return displayUrl(this.base);
  }

  private async get(path: string, params: Record<string, string>, resultType: 'vector' | 'matrix') {
    const url = new URL(this.base);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/api/v1/${path}`;
    url.search = new URLSearchParams(params).toString();
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
    if (answer.data?.resultType !== resultType || !Array.isArray(answer.data.result)) {
      throw new ServerError(`${what} answered a ${String(answer.data?.resultType)} where a ${resultType} was expected`);
    }
    const number = (text: string | undefined) => {
      const value = Number(text);
      if (!Number.isFinite(value)) throw new ServerError(`${what} answered a value that is not a finite number: ${String(text)}`);
      return value;
    };
    return { result: answer.data.result, number };
  }

  /** An instant query evaluated at `time`; the result must be a vector. */
  async query(promql: string, time: Date): Promise<VectorSample[]> {
    const { result, number } = await this.get('query', { query: promql, time: seconds(time) }, 'vector');
    return result.map((sample) => ({ metric: sample.metric ?? {}, value: number(sample.value?.[1]) }));
  }

  /** A range query evaluated at start, start + step, … up to end; the result must be a matrix. */
  async queryRange(promql: string, range: { start: Date; end: Date; stepSeconds: number }): Promise<MatrixSeries[]> {
    const params = { query: promql, start: seconds(range.start), end: seconds(range.end), step: String(range.stepSeconds) };
    const { result, number } = await this.get('query_range', params, 'matrix');
    return result.map((series) => ({
      metric: series.metric ?? {},
      values: (series.values ?? []).map(([time, value]): [number, number] => [Number(time), number(value)]),
    }));
  }
}
