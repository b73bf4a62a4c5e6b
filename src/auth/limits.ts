import { DEFAULT_HUB_TIMEOUTS, type HubTimeouts } from "./cookie-refresh";
import { isRecord } from "../json";

/** Default deadline of one auth request. */
export const DEFAULT_AUTH_TIMEOUT = 15_000;

/**
 * The `authTimeout` option, or the default when it is not a positive number.
 */
export function resolveAuthTimeout(option: unknown): number {
    return typeof option === "number" && option > 0 ? option : DEFAULT_AUTH_TIMEOUT;
}

/**
 * The `hubTimeouts` option with defaults for what is missing: `dispatch` must be a finite number ≥ 0,
 * `write` a number > 0 (`Infinity` for a hub without a write timeout).
 */
export function resolveHubTimeouts(option: unknown): HubTimeouts {
    const given = isRecord(option) ? option : {};
    const { dispatch, write } = given;
    return {
        dispatch: typeof dispatch === "number" && Number.isFinite(dispatch) && dispatch >= 0 ? dispatch : DEFAULT_HUB_TIMEOUTS.dispatch,
        write: typeof write === "number" && write > 0 ? write : DEFAULT_HUB_TIMEOUTS.write,
    };
}

/** The most channels one connection may carry (the server rejects larger batches). */
export const MAX_CHANNELS = 100;
