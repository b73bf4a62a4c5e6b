import { MERCURE_DETAIL_TYPE } from "../hub/grants";
import { signJwt } from "./jwt";

/** What {@link mintAccessToken} builds a token from. */
export interface AccessTokenInput {
    /** The HS256 key the hub verifies with (its `--jwt-key`). */
    jwtKey: string;
    /** `iss`: one of the hub's trusted issuers (its `--issuer`). */
    issuer: string;
    /**
     * `aud`: the hub's resource identifier, which is the hub URL exactly as clients reach it
     * (`http://127.0.0.1:3000/.well-known/mercure` is not `http://localhost:3000/…`), unless the hub
     * was started with `--resource`.
     */
    resource: string;
    /** Topics (or `*`) the token may publish to. */
    publish: readonly string[];
    /** Topics (or `*`) the token may subscribe to, private updates included. */
    subscribe: readonly string[];
    /** Lifetime in seconds. */
    ttl: number;
    /** Current time in milliseconds. */
    now: number;
}

/**
 * Mint a Mercure 1.0 access token the dev hub (and the reference hub) accepts: HS256 with `typ` `at+jwt`,
 * `iss`, `aud`, `iat`, `exp` and one `authorization_details` entry per action, each with exact-match topics.
 */
export function mintAccessToken(input: AccessTokenInput): string {
    const iat = Math.floor(input.now / 1000);
    const details = (["publish", "subscribe"] as const)
        .filter((action) => input[action].length > 0)
        .map((action) => ({
            type: MERCURE_DETAIL_TYPE,
            actions: [action],
            // [spec] mercure-hub §2.2: `match_type` defaults to exact; `*` matches every topic.
            topics: input[action].map((match) => ({ match })),
        }));
    return signJwt({ iss: input.issuer, aud: input.resource, iat, exp: iat + input.ttl, authorization_details: details }, input.jwtKey, "HS256");
}
