/** esbuild's options for an entry point run as a process that bundles its npm packages, but those left external. */
export const PACKAGES_BUNDLED: { external: string[]; banner: { js: string } };
