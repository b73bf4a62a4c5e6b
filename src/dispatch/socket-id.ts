/**
 * A random id for `toOthers()` (laravel-mercure §4.5): a UUID where available (secure contexts), a
 * random base-36 string elsewhere. The server copies it into the envelopes this connection caused.
 */
export function createSocketId(): string {
    const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
    if (typeof crypto?.randomUUID === "function") return crypto.randomUUID();
    return Math.random().toString(36).slice(2) + "." + Date.now().toString(36);
}
