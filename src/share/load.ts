/** What the lazily loaded engine chunk offers: `./engine`'s exports. */
export type EngineModule = typeof import("./engine");

/** The one in-flight or finished load; cleared when a load fails so it can retry. */
let loading: Promise<EngineModule> | undefined;

/** Load the hub engine on first use, once per page (a separate chunk: only the leading tab needs it). */
export function loadEngine(): Promise<EngineModule> {
    loading ??= import("./engine").catch((error: unknown) => {
        loading = undefined;
        throw error;
    });
    return loading;
}
