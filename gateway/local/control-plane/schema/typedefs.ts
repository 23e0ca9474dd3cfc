import {
  Type,
  type Static,
  type TArray,
  type TBoolean,
  type TInteger,
  type TNull,
  type TNumber,
  type TObject,
  type TProperties,
  type TRecord,
  type TSchema,
  type TString,
  type TUnion,
  type TUnsafe,
} from '@sinclair/typebox';
import { certificateError, keyError } from './pem.ts';

/**
 * Kong's schema DSL (kong/db/schema/init.lua, typedefs.lua) on TypeBox: each builder takes Kong's
 * field attributes and returns a JSON Schema (what ajv reads) whose TypeScript type is the value
 * Kong stores: a field that is not `required` is nullable, as Kong's nulls. The Kong attributes
 * ride along under `x-kong`, which is what the validator (validate.ts) and the `/schemas`
 * endpoints (kong-format.ts) read, so one declaration serves the types, the checks and the API.
 */

export type KongType = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'set' | 'map' | 'record' | 'foreign';

/** A string check Kong writes as a custom_validator or typedef function: an error, or undefined. */
export type Check = (value: string) => string | undefined;

export interface KongAttributes {
  type: KongType;
  required?: boolean;
  /** Filled by the database (ids, timestamps): never required in input. */
  auto?: boolean;
  unique?: boolean;
  default?: unknown;
  one_of?: readonly (string | number)[];
  between?: readonly [number, number];
  gt?: number;
  len_min?: number;
  /** array, set: elements of two of these subsets may not be there together. */
  mutually_exclusive_subsets?: readonly (readonly string[])[];
  starts_with?: string;
  match?: RegExp;
  custom?: Check;
  /** array, set: the elements; map: keys and values; record: the fields in order. */
  elements?: TSchema;
  keys?: TSchema;
  values?: TSchema;
  fields?: TProperties;
  /** foreign: the entity type referenced, and what deleting it does to this one. */
  reference?: string;
  on_delete?: 'cascade' | 'restrict';
  /** Kept by the store for its own use: not a field of Kong's schema, never read from input. */
  internal?: boolean;
  /** typedefs.uuid: an auto field that is a UUID (other auto strings are random hex, as Kong makes them). */
  uuid?: boolean;
  /** Kong's `abstract`: validated elsewhere (a plugin's config, by the plugin's own schema). */
  abstract?: boolean;
  /** Kong's `transient`: accepted on writes and answered on reads, never stored with the entity (a certificate's snis). */
  transient?: boolean;
}

export const KONG = 'x-kong';

/** The schema of a field as declared: its JSON Schema with Kong's attributes. */
export type FieldSchema = TSchema & { [KONG]?: KongAttributes };

type Nullable<S extends TSchema> = TUnion<[S, TNull]>;
/** Kong's rule: a field is nullable unless it is required (auto fields are always set when stored). */
type Field<S extends TSchema, A> = A extends { required: true } ? S : A extends { auto: true } ? S : Nullable<S>;
/** The non-null form of a field schema (elements of arrays are required, as Kong makes them). */
export type NonNull<S extends TSchema> = S extends TUnion<[infer I extends TSchema, TNull]> ? I : S;

interface Common<D> {
  required?: boolean;
  auto?: boolean;
  unique?: boolean;
  default?: D;
  description?: string;
}

/** The inner schema and Kong's attributes of a field, looking through the null of a nullable one. */
export function kongField(schema: TSchema): { inner: FieldSchema; attributes: KongAttributes; nullable: boolean } {
  const variants: unknown = schema.anyOf;
  const nullable = Array.isArray(variants) && variants.length === 2 && (variants[1] as TSchema).type === 'null';
  const inner = (nullable && Array.isArray(variants) ? variants[0] : schema) as FieldSchema;
  const attributes = inner[KONG];
  if (!attributes) throw new Error(`not a Kong field schema: ${JSON.stringify(schema)}`);
  return { inner, attributes, nullable };
}

export function nonNull<S extends TSchema>(schema: S): NonNull<S> {
  return kongField(schema).inner as NonNull<S>;
}

function field<S extends TSchema, A extends Common<unknown>>(inner: S, attributes: A): Field<S, A> {
  const json = inner as FieldSchema;
  if (attributes.default !== undefined && attributes.default !== null) json.default = attributes.default;
  if (attributes.description) json.description = attributes.description;
  return (attributes.required || attributes.auto ? inner : Type.Union([inner, Type.Null()])) as Field<S, A>;
}

function attrs(type: KongType, a: Common<unknown>, extra: Partial<KongAttributes> = {}): { [KONG]: KongAttributes } {
  const { description: _d, ...kong } = a as Common<unknown> & Partial<KongAttributes>;
  return { [KONG]: { ...kong, ...extra, type } };
}

export interface StringAttributes extends Common<string> {
  one_of?: readonly string[];
  match?: RegExp;
  /** Kong's starts_with validator ("should start with: …"), run before match. */
  starts_with?: string;
  len_min?: number;
  custom?: Check;
}

/** A string field's type: the union of its one_of values when it has them. */
type StringSchema<A> = A extends { one_of: readonly (infer O extends string)[] } ? TUnsafe<O> : TString;

export function string<const A extends StringAttributes>(a: A = {} as A): Field<StringSchema<A>, A> {
  const json = Type.String({
    ...attrs('string', a),
    // Kong refuses empty strings unless len_min says otherwise (validate_field).
    minLength: a.len_min ?? 1,
    ...(a.one_of ? { enum: [...a.one_of] } : {}),
    ...(a.match ? { pattern: a.match.source } : a.starts_with !== undefined ? { pattern: `^${a.starts_with.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}` } : {}),
  });
  return field(json as StringSchema<A>, a);
}

export interface NumberAttributes extends Common<number> {
  one_of?: readonly number[];
  between?: readonly [number, number];
  gt?: number;
}

type NumberSchema<A, S extends TSchema> = A extends { one_of: readonly (infer O extends number)[] } ? TUnsafe<O> : S;

function numeric(type: 'integer' | 'number', a: NumberAttributes): TInteger | TNumber {
  const options = {
    ...attrs(type, a),
    ...(a.one_of ? { enum: [...a.one_of] } : {}),
    ...(a.between ? { minimum: a.between[0], maximum: a.between[1] } : {}),
    ...(a.gt !== undefined ? { exclusiveMinimum: a.gt } : {}),
  };
  return type === 'integer' ? Type.Integer(options) : Type.Number(options);
}

export function integer<const A extends NumberAttributes>(a: A = {} as A): Field<NumberSchema<A, TInteger>, A> {
  return field(numeric('integer', a) as NumberSchema<A, TInteger>, a);
}

export function number<const A extends NumberAttributes>(a: A = {} as A): Field<TNumber, A> {
  return field(numeric('number', a) as TNumber, a);
}

export function boolean<const A extends Common<boolean>>(a: A = {} as A): Field<TBoolean, A> {
  return field(Type.Boolean(attrs('boolean', a)), a);
}

export interface ArrayAttributes extends Common<unknown[]> {
  len_min?: number;
  mutually_exclusive_subsets?: readonly (readonly string[])[];
  transient?: boolean;
}

/** Kong's array: elements are required (validate_elements). */
export function array<E extends TSchema, const A extends ArrayAttributes>(elements: E, a: A = {} as A): Field<TArray<NonNull<E>>, A> {
  const items = nonNull(elements);
  return field(Type.Array(items, { ...attrs('array', a, { elements: items }), ...(a.len_min ? { minItems: a.len_min } : {}) }), a);
}

/** Kong's set: an array whose duplicates Kong drops. */
export function set<E extends TSchema, const A extends ArrayAttributes>(elements: E, a: A = {} as A): Field<TArray<NonNull<E>>, A> {
  const items = nonNull(elements);
  return field(Type.Array(items, { ...attrs('set', a, { elements: items }), ...(a.len_min ? { minItems: a.len_min } : {}) }), a);
}

/** Kong's map: string keys (checked by `keys`), required values. */
export function map<V extends TSchema, const A extends Common<Record<string, unknown>>>(
  keys: TSchema,
  values: V,
  a: A = {} as A,
): Field<TRecord<TString, NonNull<V>>, A> {
  const valueSchema = nonNull(values);
  return field(Type.Record(Type.String(), valueSchema, attrs('map', a, { keys: nonNull(keys), values: valueSchema })), a);
}

/** Kong's record: known fields only, each validated by its own schema. */
export function record<P extends TProperties, const A extends Common<Record<string, unknown>>>(
  fields: P,
  a: A = {} as A,
): Field<TObject<P>, A> {
  return field(Type.Object(fields, { additionalProperties: false, ...attrs('record', a, { fields }) }), a);
}

export interface ForeignAttributes extends Common<null> {
  on_delete?: 'cascade' | 'restrict';
}

type TForeignKey = TObject<{ id: TString }>;
export type ForeignKey = Static<TForeignKey>;

/** A foreign key: `{ id }` of an entity of `reference`. */
export function foreign<const A extends ForeignAttributes>(reference: string, a: A = {} as A): Field<TForeignKey, A> {
  return field(Type.Object({ id: Type.String() }, attrs('foreign', a, { reference, on_delete: a.on_delete ?? 'restrict' })), a);
}

/** A field the store keeps for itself (not in Kong's schema, never accepted from input). */
export function internal<S extends TSchema>(schema: S): S {
  const { attributes } = kongField(schema);
  attributes.internal = true;
  return schema;
}

// Kong's typedefs (kong/db/schema/typedefs.lua) the entities share.

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_PATTERN.test(value);

/** An entity's fields, in Kong's order. */
export const entity = <P extends TProperties>(fields: P): TObject<P> => Type.Object(fields, { additionalProperties: false });

/** typedefs.uuid: an id the database generates unless given. */
export const uuid = () => {
  const schema = string({ auto: true, custom: (value) => (isUuid(value) ? undefined : 'expected a valid UUID') });
  kongField(schema).attributes.uuid = true;
  return schema;
};
/** typedefs.auto_timestamp_s */
export const autoTimestamp = () => integer({ auto: true });
/** typedefs.lua:118-134 validate_tag (3.9.3): space, printable ASCII but ',' and '/', and UTF-8 beyond ASCII. */
const TAG = /^[ \x21-\x2b\x2d\x2e\x30-\x7e\u0080-\u{10ffff}]+$/u;
const tagError: Check = (tag) =>
  TAG.test(tag) ? undefined : `invalid tag '${tag}': expected printable ascii (except \`,\` and \`/\`) or valid utf-8 sequences`;
/** typedefs.tags: a set of tags (typedefs.tag: a string, its check a custom_validator). */
export const tags = () => set(string({ required: true, custom: tagError }));
/** typedefs.certificate (kong/db/schema/typedefs.lua:435, 3.9.3): a PEM certificate, parsed on write. */
export const certificate = <const A extends { required: boolean }>(a: A) => string({ ...a, custom: certificateError });
/** typedefs.key (typedefs.lua:442): a PEM private key, parsed on write. */
export const key = <const A extends { required: boolean }>(a: A) => string({ ...a, custom: keyError });
/** typedefs.utf8_name (typedefs.lua:137-151, 3.9.3): letters, digits, . - _ ~ and UTF-8 beyond ASCII. */
const UTF8_NAME = /^[A-Za-z0-9._~\u0080-\u{10ffff}-]+$/u;
const utf8NameError: Check = (value) =>
  UTF8_NAME.test(value) ? undefined : `invalid value '${value}': the only accepted ascii characters are alphanumerics or ., -, _, and ~`;
/** typedefs.utf8_name: a unique name (services, routes, a plugin's instance_name). */
export const utf8Name = () => string({ unique: true, custom: utf8NameError });
/** constants.PROTOCOLS (kong/constants.lua:77-91, 3.9.3): the open-source protocols, sorted (ws/wss are Enterprise's). */
export const PROTOCOLS = ['grpc', 'grpcs', 'http', 'https', 'tcp', 'tls', 'tls_passthrough', 'udp'] as const;
/** The protocols of the http subsystem (constants.PROTOCOLS_WITH_SUBSYSTEM), sorted: typedefs.lua:466-472. */
export const HTTP_PROTOCOLS = ['grpc', 'grpcs', 'http', 'https'] as const;
/** typedefs.protocols (typedefs.lua:474-480): any protocol, the http ones by default. */
export const protocols = () => set(string({ one_of: PROTOCOLS }), { required: true, default: [...HTTP_PROTOCOLS] });
/** typedefs.protocols_http (typedefs.lua:482-488): what most plugins' schemas narrow `protocols` to. */
export const protocolsHttp = () => set(string({ one_of: HTTP_PROTOCOLS }), { required: true, default: [...HTTP_PROTOCOLS] });

/** A record another schema validates (Kong's `abstract = true`): a plugin's config. */
export const abstractRecord = () =>
  Type.Unsafe<Record<string, unknown>>(Type.Object({}, { additionalProperties: true, [KONG]: { type: 'record', required: true, abstract: true } }));

/** A default given as data (a custom plugin's schema.lua): set on a field already built. */
export function withDefault<S extends TSchema>(schema: S, value: unknown): S {
  const { inner, attributes } = kongField(schema);
  attributes.default = value;
  inner.default = value;
  return schema;
}
