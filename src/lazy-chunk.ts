/**
 * A loader for a lazily loaded chunk: the first call starts `importer()` (a dynamic `import()` with a literal
 * specifier, so that the bundler splits the module into its own chunk), every later call shares that load, once per
 * page. A load that fails (offline, a deploy in between that removed the old chunk) is forgotten, so the next call
 * downloads again instead of repeating the failure.
 */
export function lazyChunk<T>(importer: () => Promise<T>): () => Promise<T> {
    let loading: Promise<T> | undefined;
    return () =>
        (loading ??= importer().catch((error: unknown) => {
            loading = undefined;
            throw error;
        }));
}
