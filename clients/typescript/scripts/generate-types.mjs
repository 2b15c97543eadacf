// Generates src/generated/openapi.ts, the API's request and answer types, from the OpenAPI document the api
// serves (read from the file named first, or from standard input), with openapi-typescript.
//
//   make ts-types                                    (from the repository's root: the document, then this)
//   node scripts/generate-types.mjs openapi.json [out.ts]
//
// Every string enumeration is generated open: "mock" | "runway" | ... | (string & {}). Editors still offer
// the known values, and a value a newer server sends (a new provider, status, event type) type-checks as a
// string instead of being impossible.
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString, tsIntersection, tsUnion, STRING } from "openapi-typescript";
import ts from "typescript";

const DEFAULT_OUT = fileURLToPath(new URL("../src/generated/openapi.ts", import.meta.url));
const HEADER =
  "// The videogen API's types, generated from its OpenAPI document by scripts/generate-types.mjs\n" +
  "// (openapi-typescript). Do not edit: run `make ts-types` after the API changes.\n\n";

async function readInput(path) {
  if (path && path !== "-") return readFile(path, "utf8");
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

// (string & {}): any string, without collapsing the literals beside it into plain `string`.
const ANY_OTHER_STRING = tsIntersection([STRING, ts.factory.createTypeLiteralNode([])]);

// A string enumeration comes out of openapi-typescript as a union of string literals (which it writes as
// identifiers holding the quoted text); it is opened here, at every place one occurs: named schemas,
// properties, anyOf members, parameters and headers.
const isStringLiteral = (node) =>
  (ts.isLiteralTypeNode(node) && ts.isStringLiteral(node.literal)) ||
  (ts.isIdentifier(node) && node.text.startsWith('"'));

function openEnum(type) {
  return ts.isUnionTypeNode(type) && type.types.every(isStringLiteral)
    ? tsUnion([...type.types, ANY_OTHER_STRING])
    : undefined;
}

export async function generate(document) {
  const ast = await openapiTS(document, { postTransform: openEnum, defaultNonNullable: false });
  return HEADER + astToString(ast);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [input, output = DEFAULT_OUT] = process.argv.slice(2);
  const document = JSON.parse(await readInput(input));
  await writeFile(output, await generate(document));
}
