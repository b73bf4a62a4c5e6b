/**
 * A loader of a lazily loaded chunk: calling it starts `importer()` the first time (a dynamic `import()` with a
 * literal specifier, so that the bundler splits the module into its own chunk) and shares that load afterwards, once
 * per page; {@link LazyChunk.loaded} gives the module without waiting once it has arrived.
 */
export interface LazyChunk<T> {
    /** The module, loading it on the first call. */
    (): Promise<T>;
    /** The module once it has loaded, else undefined: code that already has it goes on in the same task. */
    loaded(): T | undefined;
}

/**
 * A {@link LazyChunk} for `importer`. A load that fails (offline, a deploy in between that removed the old chunk) is
 * forgotten, so the next call downloads again instead of repeating the failure.
 */
export function lazyChunk<T>(importer: () => Promise<T>): LazyChunk<T> {
    let loading: Promise<T> | undefined;
    let module: T | undefined;
    const load = () =>
        (loading ??= importer().then(
            (loaded) => (module = loaded),
            (error: unknown) => {
                loading = undefined;
                throw error;
            },
        ));
    return Object.assign(load, { loaded: () => module });
}
