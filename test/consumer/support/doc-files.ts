import { blockFile, describeBlock, docFiles, extractAllBlocks, type ReadmeBlock } from "../../e2e/support/readme-blocks";

/** One file of a consumer app, as a doc shows it. */
export interface DocAppFile {
    /** The file's text: the block's, ending with a newline. */
    readonly content: string;
    /** The block it is. */
    readonly block: ReadmeBlock;
}

/**
 * Every file of the consumer apps the docs show, by path in the scratch folder (`react/Order.tsx`): the blocks of README.md
 * and docs/*.md marked `<!-- readme-check: file <app>/<path> -->`, and the script blocks whose first line names their
 * file (`// react/OrderStatus.tsx`). The apps are made of these, so a doc's example is what runs; two blocks naming one
 * file is an error.
 */
export function docAppFiles(): Map<string, DocAppFile> {
    const files = new Map<string, DocAppFile>();
    for (const block of extractAllBlocks(docFiles())) {
        const path = blockFile(block);
        if (path === null) continue;
        const earlier = files.get(path);
        if (earlier !== undefined) throw new Error(`${describeBlock(block)} and ${describeBlock(earlier.block)} both name ${path}`);
        files.set(path, { content: block.code + "\n", block });
    }
    return files;
}
