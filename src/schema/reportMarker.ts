// How an HTML report says Unroll Lens wrote it: page() in panelHtml.ts writes this in the head of
// every page, and `sweep --report` replaces an existing file only when its first 4 KiB hold it
// (engine/sweep/exportOwnership.ts). Here, in the leaf every layer imports, so the panel's page
// writer (bundled into the extension client) needs no engine module for it.
export const REPORT_GENERATOR_META = '<meta name="generator" content="Unroll Lens">';
