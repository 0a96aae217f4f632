// autocannon 8 ships no type declarations (and @types/autocannon is not a dependency): the part of
// its API the benchmarks use (bench/harness.js, bench/long-poll.js, bench/table-size.js), from its README.
declare module 'autocannon' {
  /**
   * Starts a run; `cb` gets the error, or the aggregated result once it ends.
   * Returns the run's instance (an event emitter).
   */
  function autocannon(opts: autocannon.Options, cb: (err: Error | null, result: autocannon.Result) => void): import('node:events').EventEmitter;

  namespace autocannon {
    /** A raw request of the sequence, as `setupRequest` sees and returns it. */
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
    }

    /** One request of the sequence each connection loops over (overrides the run's own fields). */
    interface RequestSpec extends Request {
      /** Changes the raw request before it is sent; a falsy return restarts the sequence. */
      setupRequest?: (req: Request, context: Record<string, unknown>) => Request | null | undefined;
    }

    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Seconds. */
      duration?: number;
      connections?: number;
      pipelining?: number;
      requests?: RequestSpec[];
    }

    /** A histogram's figures (hdr-histogram-percentiles-obj): average, mean, spread and percentiles. */
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      p2_5: number;
      p50: number;
      p75: number;
      p90: number;
      p97_5: number;
      p99: number;
      p99_9: number;
      p99_99: number;
      p99_999: number;
    }

    interface Result {
      url: string;
      /** Requests per second (`total`: requests completed). */
      requests: Histogram & { total: number; sent: number };
      /** Milliseconds per request. */
      latency: Histogram;
      /** Bytes per second (`total`: bytes read). */
      throughput: Histogram & { total: number };
      /** Seconds. */
      duration: number;
      /** Connection errors, timeouts included. */
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      connections: number;
      pipelining: number;
      start: Date;
      finish: Date;
    }
  }

  export = autocannon;
}
