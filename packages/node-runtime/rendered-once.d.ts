/**
 * `render()`'s result, kept in a development clone's node_modules/.cache/ by the hash of `inputs`
 * and the installed versions of `packages`; rendered at each call where there is no such cache.
 */
export function renderedOnce<T>(nodeModules: URL, key: { inputs: unknown[]; packages: string[] }, render: () => T): T;
