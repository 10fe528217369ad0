/** Reconnect delays: exponential with jitter, so a gateway restart is not met by every client at once. */
export interface BackoffOptions {
  /** First delay in ms (default 500). */
  initial?: number;
  /** Ceiling in ms (default 30 000). */
  max?: number;
  /** Growth per failed attempt (default 2). */
  factor?: number;
  /**
   * Share of each delay that is random (0…1, default 0.5): the delay is drawn from [d·(1−jitter), d]. Some
   * jitter is needed to spread clients out; keeping half of the delay fixed keeps them from hammering.
   */
  jitter?: number;
}

export class Backoff {
  private attempt = 0;
  readonly initial: number;
  readonly max: number;
  readonly factor: number;
  readonly jitter: number;

  constructor(options: BackoffOptions = {}, private readonly random: () => number = Math.random) {
    this.initial = options.initial ?? 500;
    this.max = options.max ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = Math.min(1, Math.max(0, options.jitter ?? 0.5));
  }

  /** The delay before the next attempt; each call counts as one more failure. */
  next(): number {
    const ceiling = Math.min(this.max, this.initial * Math.pow(this.factor, this.attempt));
    this.attempt += 1;
    return Math.round(ceiling * (1 - this.jitter * this.random()));
  }

  /** How many delays were handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  /** A session reached the live state: the next failure starts from the initial delay again. */
  reset(): void {
    this.attempt = 0;
  }
}
