import type { Diagnosis } from "../discovery/classify";
import { loadDiagnostics } from "../discovery/load";
import type { MercureError } from "../errors";
import { channelKind } from "../topic/channel-kind";
import type { HubStream } from "../transport/hub-stream";
import type { Platform } from "../transport/platform";
import type { ConnectorHost } from "./connector-host";

/*
 * The probe that names why a stream failed for good: a chunk of its own, loaded at the first failure that needs it
 * (see `StreamEvents`), which loads the diagnostics chunk in turn. A page whose streams never fail downloads neither.
 */

/** A named cause of a stream failure, and the error a channel gets for it. */
interface NamedCause {
    /** What the probe found. */
    readonly diagnosis: Diagnosis;
    /** The actionable `MercureError` for one channel. */
    error(channel: string): MercureError;
}

/**
 * Probe the hub of `host` once for `stream`'s terminal failure (the first of a failure streak: `StreamEvents` counts)
 * and report the cause it names on the stream's channels; a configuration that must change first, or a `fatal` refusal
 * whatever the probe finds, stops the connector with `failed`. `status` is the refusal's HTTP status, which only an
 * `EventSource` outside a browser reports: a 401 the probe (made with the connector's `fetch`) does not reproduce
 * means that the `EventSource` does not send the cookie that `fetch` keeps. Nothing happens when `disconnect()` ran since
 * `generation` or a stream opened meanwhile: the failure is history then (`"stale"`). Resolves with `"named"` when it
 * reported a cause (the `stream_error`s held meanwhile are then dropped), `"unnamed"` when it found none (the caller
 * reports what it held, then stops a `fatal` failure: see `StreamEvents`); never rejects.
 */
export async function diagnoseStream(host: ConnectorHost, stream: HubStream, fatal: boolean, generation: number, status: number | undefined): Promise<"named" | "unnamed" | "stale"> {
    const platform = host.hub.platform;
    if (platform === null) return "stale";
    const named = await probe(platform, stream, status, host.cookieRefresh.expiresAt(), host.signal());
    if (generation !== host.generation() || host.streams.current?.isOpen() === true) return "stale";
    if (named === null) return "unnamed";
    host.log?.("diagnosis", { code: named.diagnosis.code, retry: named.diagnosis.retry });
    host.settle(() => {
        host.reportEach(stream.channels, named.error);
        if (fatal || !named.diagnosis.retry) host.stop("failed");
    });
    return "named";
}

/**
 * A stream refused with 401 that the same request through the connector's `fetch` is not: outside a browser, the
 * `EventSource` makes its requests without the cookie the auth request stored in that `fetch`. Retried with backoff
 * (the next auth may change nothing, but a hub that was briefly refusing heals).
 */
const UNSENT_COOKIE: Diagnosis = {
    code: "cookie_missing",
    message:
        "The hub refused the event stream with HTTP 401 but accepts the same request through the connector's `fetch`: the EventSource does not send the cookie that `fetch` keeps; give it that `fetch` (the eventsource package: `new EventSource(url, { fetch })`).",
    status: 401,
    retry: true,
};

/**
 * Probe `platform`'s hub as `stream` failed with `status` (a `fetch` reads what `EventSource` hides), loading the
 * diagnostics chunk, and name the cause: what the probe found; else, for a 401, {@link UNSENT_COOKIE}. A cause with
 * status 401 carries the cookie-size hint of the stream's channels. Null when nothing is named: the hub accepts the
 * request now (or the probe was aborted), or the diagnostics chunk did not load (the `stream_error` already reported
 * stands either way).
 */
async function probe(platform: Platform, stream: HubStream, status: number | undefined, tokenExpiresAt: number | null, signal: AbortSignal): Promise<NamedCause | null> {
    try {
        const { diagnose, diagnosisError } = await loadDiagnostics();
        // The probe reproduces the failed request's number of matchers, never its topics.
        const found = await diagnose({ hub: platform.hub, fetch: platform.fetch, failure: { kind: "stream" }, subscribeUrl: stream.url, tokenExpiresAt, signal });
        const diagnosis = found ?? (status === 401 ? UNSENT_COOKIE : null);
        if (diagnosis === null) return null;
        const named = diagnosis.status === 401 ? { ...diagnosis, message: diagnosis.message + tokenSizeHint(stream.channels) } : diagnosis;
        return { diagnosis: named, error: (channel) => diagnosisError(named, channel) };
    } catch {
        return null;
    }
}

/**
 * What the channels of a stream refused with 401 may have done to the cookie, added to the named cause. Laravel's
 * cookie grows with every guarded channel: about 176 bytes for a private one (its topic and its whisper
 * topic) and 580 for a presence one (measured by `npm run bench`), and browsers keep at most 4,096 bytes of
 * a cookie, so past about 19 private or 6 presence channels the browser drops it and the hub answers 401.
 * The reference hub also rejects tokens with more than 100 topic grants (two per private channel, three per
 * presence channel).
 */
function tokenSizeHint(channels: Iterable<string>): string {
    let grants = 0;
    let bytes = 0;
    for (const name of channels) {
        const kind = channelKind(name);
        grants += kind === "presence" ? 3 : kind === "public" ? 0 : 2;
        bytes += kind === "presence" ? 580 : kind === "public" ? 0 : 176;
    }
    return (
        (bytes > 3_500
            ? ` The hub cookie of this many guarded channels outgrows the 4,096 bytes a browser keeps (about 19 private or 6 presence channels fit).`
            : "") +
        (grants > 100
            ? ` With ${grants} topic grants in the cookie, a hub capping tokens at 100 (the reference hub does) refuses it.`
            : "")
    );
}
