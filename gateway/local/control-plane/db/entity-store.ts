import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import knex, { type Knex } from 'knex';
import { sqliteConfig } from '../../../../packages/node-runtime/sqlite.js';
import { ENTITY_NAMES, definitionOf, type AnyEntity, type EntityName as EntityType, type EntityTypes } from '../schema/entities/index.ts';
import { kongField } from '../schema/typedefs.ts';

const CONFIG_VERSION = 'config_version';

/**
 * A row as the current schema reads it: fields added since it was written read as null, fields
 * since dropped are left behind (an older key-auth row's `ttl`, now `expires_at`).
 */
function upgradeStored(type: EntityType, row: Record<string, unknown>): AnyEntity {
  const entity: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(definitionOf(type).schema.properties)) {
    entity[name] = row[name] ?? (kongField(schema).attributes.required ? row[name] : null);
  }
  // A row of the current schema: the store wrote it from a validated entity.
  return entity as unknown as AnyEntity;
}
export type EntityMaps = { [T in EntityType]: ReadonlyMap<string, EntityTypes[T]> };

/** An immutable view of every entity; replaced as a whole on each committed write. */
export class Snapshot {
  constructor(readonly entities: EntityMaps, readonly version: number) {}

  get<T extends EntityType>(type: T, id: string): EntityTypes[T] | undefined {
    return this.entities[type].get(id);
  }

  list<T extends EntityType>(type: T): EntityTypes[T][] {
    return [...this.entities[type].values()] as EntityTypes[T][];
  }
}

/** A write in progress: changes apply to copies of the maps and become visible only on commit. */
export class Draft {
  readonly maps: { [T in EntityType]: Map<string, EntityTypes[T]> };
  readonly changed = new Map<string, { type: EntityType; id: string; entity?: AnyEntity }>();
  /** The configuration version this draft becomes when committed. */
  readonly version: number;

  constructor(base: Snapshot) {
    this.version = base.version + 1;
    this.maps = Object.fromEntries(
      ENTITY_NAMES.map((type) => [type, new Map(base.entities[type] as ReadonlyMap<string, AnyEntity>)]),
    ) as unknown as Draft['maps'];
  }

  get<T extends EntityType>(type: T, id: string): EntityTypes[T] | undefined {
    return this.maps[type].get(id);
  }

  list<T extends EntityType>(type: T): EntityTypes[T][] {
    return [...this.maps[type].values()] as EntityTypes[T][];
  }

  put<T extends EntityType>(type: T, entity: EntityTypes[T]): void {
    (this.maps[type] as Map<string, EntityTypes[T]>).set(entity.id, entity);
    this.changed.set(`${type}:${entity.id}`, { type, id: entity.id, entity });
  }

  delete(type: EntityType, id: string): void {
    this.maps[type].delete(id);
    this.changed.set(`${type}:${id}`, { type, id });
  }
}

/**
 * The store holds certificates' private keys and key-auth keys stored in clear: its file is made
 * owner-only (0600, as Kong's data-plane lmdb store is) before SQLite opens it, whatever the
 * umask, and SQLite creates its -wal and -shm files with the database's mode (os_unix.c
 * findCreateFileMode, unixOpenSharedMemory). Existing files are made so too.
 */
function ownerOnly(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      chmodSync(path, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/**
 * Kong's database, locally: every entity in one SQLite file (data/gateway.sqlite), loaded into
 * memory at start. Writes are serialised, persisted in one SQLite transaction, and only then
 * published as a new Snapshot, so readers never see a half-applied change.
 */
export class EntityStore {
  private current: Snapshot;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(snapshot: Snapshot) => void>();

  private constructor(private readonly db: Knex, initial: Snapshot) {
    this.current = initial;
  }

  static async open(file: string): Promise<EntityStore> {
    if (file !== ':memory:') {
      mkdirSync(dirname(file), { recursive: true });
      ownerOnly(file);
    }
    const db = knex(sqliteConfig(file));
    if (!(await db.schema.hasTable('entities'))) {
      await db.schema.createTable('entities', (table) => {
        table.string('type', 32).notNullable();
        table.string('id', 36).notNullable();
        table.text('body').notNullable();
        table.primary(['type', 'id']);
      });
    }
    // The configuration's version survives restarts: data planes compare hashes, but the version
    // orders what they report (config_version in snapshot.schema.json).
    if (!(await db.schema.hasTable('meta'))) {
      await db.schema.createTable('meta', (table) => {
        table.string('key', 64).primary();
        table.text('value').notNullable();
      });
    }
    const maps = Object.fromEntries(ENTITY_NAMES.map((type) => [type, new Map()])) as { [T in EntityType]: Map<string, AnyEntity> };
    for (const row of await db<{ type: EntityType; id: string; body: string }>('entities').select()) {
      maps[row.type]?.set(row.id, upgradeStored(row.type, JSON.parse(row.body) as Record<string, unknown>));
    }
    const version = await db<{ key: string; value: string }>('meta').where({ key: CONFIG_VERSION }).first();
    return new EntityStore(db, new Snapshot(maps as unknown as EntityMaps, version ? Number(version.value) : 0));
  }

  get snapshot(): Snapshot {
    return this.current;
  }

  onChange(listener: (snapshot: Snapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs `change` on a draft of the current state; if it returns without throwing, persists what
   * it changed atomically and publishes it. Writes run one at a time.
   */
  write<R>(change: (draft: Draft) => R): Promise<R> {
    const run = async () => {
      const draft = new Draft(this.current);
      const result = change(draft);
      if (draft.changed.size > 0) {
        const next = new Snapshot(draft.maps, draft.version);
        await this.db.transaction(async (trx) => {
          await trx('meta').insert({ key: CONFIG_VERSION, value: String(next.version) }).onConflict('key').merge();
          for (const { type, id, entity } of draft.changed.values()) {
            if (entity) {
              await trx('entities').insert({ type, id, body: JSON.stringify(entity) }).onConflict(['type', 'id']).merge();
            } else {
              await trx('entities').where({ type, id }).delete();
            }
          }
        });
        this.current = next;
        for (const listener of this.listeners) listener(this.current);
      }
      return result;
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.queue;
    await this.db.destroy();
  }
}
