import { MercureError } from "../errors";
import { channelKind } from "../topic/channel-kind";
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
 * batch (about 2 log₂ n requests per failing channel), then asked for alone once more once a part passed (one more
 * request each). Null when nothing can be concluded, and the caller falls back to retrying the whole batch with its
 * backoff: a probe ended any other way (a network error, a 4xx, `disconnect()`); no part passed (the server fails,
 * not a channel); or a public channel fails alone (Laravel authorizes no public channel: the server is having a bad
 * moment). A channel that failed while the server failed for a moment passes the second time and is not isolated.
 */
export async function failingAlone(names: readonly string[], probe: Probe): Promise<Map<string, number> | null> {
    const failing = new Map<string, number>();
    let passed = false;
    const search = async (part: readonly string[]): Promise<boolean> => {
        const result = await probe(part);
        if (result.kind === "ok") return (passed = true);
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
    if (!concluded || !passed) return null;
    for (const name of [...failing.keys()]) {
        if (channelKind(name) === "public") return null;
        const again = await probe([name]);
        if (again.kind === "ok") failing.delete(name);
        else if (serverFailed(again)) failing.set(name, again.status);
        else return null;
    }
    return failing;
}

/** The error of a channel whose auth fails on its own: the others joined without it, and it is retried alone. */
export function isolatedError(name: string, endpoint: string, status: number): MercureError {
    return new MercureError(
        "auth_failed",
        `The broadcasting auth request to "${endpoint}" fails (HTTP ${status}) whenever it holds channel "${name}"; the other channels joined without it, and it is retried alone with backoff (for a private-encrypted- channel: is the broadcaster's encryption_key set?).`,
        { channel: name, status },
    );
}
