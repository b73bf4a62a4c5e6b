import { MercureError } from "../errors";
import type { AuthResult } from "./auth-client";

/*
 * Lazily loaded (issue 30): finding the channels that make a batch auth request fail on their own. A Laravel app
 * answers 5xx to every batch that holds one such channel (a `private-encrypted-` channel without `encryption_key`),
 * which would keep every other channel of the page, public ones included, from ever getting a stream. The batch
 * cannot simply leave public channels out: a hub that refuses anonymous subscribers needs the cookie of a
 * successful batch for them too. So the batch is split in halves until the failing channels stand alone.
 */

/** Authorize `names` in one request, as the connector's batch auth does. */
export type Probe = (names: readonly string[]) => Promise<AuthResult>;

/** Whether an answer is the server failing (5xx) on what it was asked, as opposed to a network error or a refusal. */
function serverFailed(result: AuthResult): result is AuthResult & { kind: "error"; status: number } {
    return result.kind === "error" && result.status !== null && result.status >= 500;
}

/**
 * The channels of `names` whose auth fails with 5xx on its own, with the status each got, found by halving the
 * batch (about 2 log₂ n requests per failing channel). Null when a probe ended any other way (a network error, a
 * 4xx, `disconnect()`): nothing can be concluded, and the caller falls back to retrying the whole batch.
 */
export async function failingAlone(names: readonly string[], probe: Probe): Promise<Map<string, number> | null> {
    const failing = new Map<string, number>();
    const search = async (part: readonly string[]): Promise<boolean> => {
        const result = await probe(part);
        if (result.kind === "ok") return true;
        if (!serverFailed(result)) return false;
        if (part.length === 1) {
            failing.set(part[0]!, result.status);
            return true;
        }
        const middle = Math.ceil(part.length / 2);
        return (await search(part.slice(0, middle))) && (await search(part.slice(middle)));
    };
    const middle = Math.ceil(names.length / 2);
    const concluded = (await search(names.slice(0, middle))) && (await search(names.slice(middle)));
    return concluded ? failing : null;
}

/** The error of a channel whose auth fails on its own: the others joined without it, and it is retried alone. */
export function isolatedError(name: string, endpoint: string, status: number): MercureError {
    return new MercureError(
        "auth_failed",
        `The broadcasting auth request to "${endpoint}" fails (HTTP ${status}) whenever it holds channel "${name}"; the other channels joined without it, and it is retried alone with backoff (for a private-encrypted- channel: is the broadcaster's encryption_key set?).`,
        { channel: name, status },
    );
}
