/** The part of autocannon 8's API the benchmark uses (the package ships no types). */
declare module "autocannon" {
  export interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
  }
  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    onResponse?: (status: number, body: string, context: unknown, headers: Record<string, string>) => void;
    /** Changes the request before each send (a fresh body per request). */
    setupRequest?: (request: Request, context: unknown) => Request;
  }
  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: Request[];
    timeout?: number;
    /** Requests per second from all connections together (open loop up to `connections` in flight). */
    overallRate?: number;
    /** Called with each connection's client before it starts. */
    setupClient?: (client: Client) => void;
  }
  export interface Client {
    /** Replaces the requests this connection cycles through. */
    setRequests(requests: Request[]): void;
  }
  export interface Result {
    latency: Histogram;
    requests: Histogram & { total: number };
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    "2xx": number;
  }
  export interface Tracker extends PromiseLike<Result> {
    on(event: "response", listener: (client: unknown, status: number, bytes: number, ms: number) => void): Tracker;
  }
  function autocannon(options: Options): Tracker;
  export default autocannon;
}
