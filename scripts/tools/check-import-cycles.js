// `npm run lint`: no import cycles among the repository's modules, what eslint's
// `import-x/no-cycle` checked at ~16% of eslint's time (each imported file parsed again and the
// graph walked again from each file). Here every module is parsed once, by TypeScript's parser
// with no type information, and the graph's strongly connected components are found once.
//
// An edge is what no-cycle follows: `import … from`, `export … from` and `import('…')` of a string,
// `import x = require('…')`, to a module of the repository. Imports of types only (`import type`,
// or every name marked `type`) are no edge: they are gone at run time. `export type … from` is
// counted (no-cycle counts it from the file it reports on).
import console from 'node:console';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';

// require(), not import: node's ES module loader scans TypeScript's 9 MB for its exports (~2 CPU-s).
const ts = createRequire(import.meta.url)('typescript');

const ROOT = path.resolve(import.meta.dirname, '../..');
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', 'data', 'tmp', 'test-artifacts']);
const MODULE_EXTENSIONS = ['.ts', '.js', '.mjs', '.cjs', '.mts', '.cts'];
const isModule = (file) => MODULE_EXTENSIONS.some((extension) => file.endsWith(extension)) && !file.endsWith('.built.mjs');

function moduleFiles(directory) {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) {
      return entry.name.startsWith('.') || SKIPPED_DIRECTORIES.has(entry.name) ? [] : moduleFiles(full);
    }
    return entry.isFile() && isModule(entry.name) ? [full] : [];
  });
}

const isFile = (file) => statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;

/** The repository file a specifier names, or undefined (a package, a built-in, a missing file). */
function resolve(specifier, importer) {
  if (!specifier.startsWith('.') && !specifier.startsWith('/')) {
    // A package: counts only if it is one of the repository's own (a workspace, linked in node_modules).
    try {
      const found = createRequire(importer).resolve(specifier);
      return path.isAbsolute(found) && found.startsWith(ROOT + path.sep) && !found.includes(`${path.sep}node_modules${path.sep}`)
        ? found : undefined;
    } catch {
      return undefined;
    }
  }
  const target = path.resolve(path.dirname(importer), specifier);
  const candidates = [
    target,
    ...['.ts', '.js', '.json'].map((extension) => target + extension),
    ...(target.endsWith('.js') ? [target.slice(0, -3) + '.ts'] : []),
    ...['.ts', '.js'].map((extension) => path.join(target, 'index' + extension)),
  ];
  return candidates.find(isFile);
}

const isTypeOnlyImport = (node) => {
  const clause = node.importClause;
  if (clause === undefined) return false; // `import './x.ts'`
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return clause.name === undefined && bindings !== undefined && ts.isNamedImports(bindings)
    && bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly);
};

/** [specifier, line] of each edge out of one module. */
function importsOf(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone });
  const found = [];
  const add = (literal) => found.push([literal.text, source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1]);
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      if (!isTypeOnlyImport(node)) add(node.moduleSpecifier);
    } else if (ts.isExportDeclaration(node)) {
      if (node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) add(node.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(node)) {
      if (!node.isTypeOnly && ts.isExternalModuleReference(node.moduleReference)
        && ts.isStringLiteral(node.moduleReference.expression)) add(node.moduleReference.expression);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (node.arguments.length === 1 && argument !== undefined && ts.isStringLiteralLike(argument)) add(argument);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Tarjan's strongly connected components of more than one module. */
function cyclicComponents(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  let next = 0;
  const connect = (file) => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const { target } of graph.get(file) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file), low.get(target)));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file), index.get(target)));
      }
    }
    if (low.get(file) === index.get(file)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1) components.push(component);
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) connect(file);
  return components;
}

/** The shortest way from a module of a component back to itself, as its edges. */
function shortestCycle(graph, start, component) {
  const members = new Set(component);
  const cameBy = new Map();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const edge of graph.get(file) ?? []) {
      if (!members.has(edge.target) || cameBy.has(edge.target)) continue;
      cameBy.set(edge.target, { ...edge, from: file });
      if (edge.target === start) {
        const route = [];
        for (let at = start; route.length === 0 || at !== start; at = cameBy.get(at).from) route.unshift(cameBy.get(at));
        return route;
      }
      queue.push(edge.target);
    }
  }
  return [];
}

const graph = new Map();
for (const file of moduleFiles(ROOT)) {
  const edges = [];
  for (const [specifier, line] of importsOf(file)) {
    const target = resolve(specifier, file);
    if (target !== undefined && target !== file && isModule(target)) edges.push({ target, specifier, line });
  }
  graph.set(file, edges);
}

const components = cyclicComponents(graph);
for (const component of components) {
  const start = [...component].sort()[0];
  const route = shortestCycle(graph, start, component);
  console.error(`import cycle among ${component.length} modules:`);
  for (const { from, specifier, line } of route) console.error(`  ${path.relative(ROOT, from)}:${line} imports ${specifier}`);
}
process.exitCode = components.length > 0 ? 1 : 0;
