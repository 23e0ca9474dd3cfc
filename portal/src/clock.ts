/** Milliseconds since the epoch; tests pass a manual one. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
