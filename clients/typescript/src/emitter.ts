export type Handler<T> = (payload: T) => void | Promise<void>;

/**
 * A typed event emitter whose `emit` waits for every handler, async ones included: the client acknowledges a
 * frame only after its handlers ran, so a slow handler slows the stream instead of queueing frames in memory.
 */
export class Emitter<Events> {
  private readonly handlers = new Map<keyof Events, Set<Handler<never>>>();

  on<K extends keyof Events>(type: K, handler: Handler<Events[K]>): () => void {
    let set = this.handlers.get(type);
    if (!set) {
      set = new Set();
      this.handlers.set(type, set);
    }
    set.add(handler as Handler<never>);
    return () => this.off(type, handler);
  }

  off<K extends keyof Events>(type: K, handler: Handler<Events[K]>): void {
    this.handlers.get(type)?.delete(handler as Handler<never>);
  }

  /** Runs the handlers one after the other; returns the errors they threw (a bad handler never stops the stream). */
  async emit<K extends keyof Events>(type: K, payload: Events[K]): Promise<unknown[]> {
    const set = this.handlers.get(type);
    if (!set || set.size === 0) return [];
    const errors: unknown[] = [];
    for (const handler of [...set]) {
      try {
        await (handler as Handler<Events[K]>)(payload);
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }

  has(type: keyof Events): boolean {
    return (this.handlers.get(type)?.size ?? 0) > 0;
  }
}
