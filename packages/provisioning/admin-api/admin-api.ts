import { createKongAdminClient, expectBody, expectDone, pages, uniqueViolation, type AdminConnection, type KongAdminClient } from './client.ts';
import {
  aclFrom,
  consumerFrom,
  credentialFrom,
  pageFrom,
  pluginFrom,
  type Acl,
  type Consumer,
  type KeyAuthCredential,
  type Plugin,
} from './entities.ts';

/** What a new key-auth credential holds: callers pass what storedCredential (api-keys.ts) built. */
export interface NewCredential {
  /** Chosen by the caller (Kong takes a given id), so that an answer lost on the way is still known. */
  id?: string;
  key: string;
  tags: string[];
  ttl?: number;
}

/** A listing's filter: Kong's `tags` query (comma: all of them) and its page size. */
export interface ListQuery {
  tags: string;
  size?: number;
}

/**
 * The Admin API calls the library makes, each answer narrowed (entities.ts) and each failure a
 * ProvisioningError naming `what` was being done. The only module that speaks openapi-fetch.
 */
export class AdminApi {
  constructor(private readonly kong: KongAdminClient) {}

  static connect(connection: AdminConnection): AdminApi {
    return new AdminApi(createKongAdminClient(connection));
  }

  async findConsumer(usernameOrId: string, what = `reading consumer ${usernameOrId}`): Promise<Consumer | undefined> {
    const result = await this.kong.GET('/consumers/{consumer_username_or_id}', { params: { path: { consumer_username_or_id: usernameOrId } } });
    if (result.response.status === 404) return undefined;
    return consumerFrom(expectBody(result, what), what);
  }

  async *listConsumers({ tags, size }: ListQuery, what = 'listing consumers'): AsyncGenerator<Consumer> {
    yield* pages((offset) =>
      this.kong
        .GET('/consumers', { params: { query: { tags, offset, size } } })
        .then((result) => pageFrom(expectBody(result, what), consumerFrom, what)),
    );
  }

  /** The new consumer, or which of its unique fields another consumer already holds. */
  async createConsumer(body: { id?: string; username: string; custom_id?: string; tags: string[] }, what: string): Promise<Consumer | { taken: 'username' | 'custom_id' }> {
    const result = await this.kong.POST('/consumers', { body });
    const taken = uniqueViolation(result);
    if (taken === 'username' || taken === 'custom_id') return { taken };
    return consumerFrom(expectBody(result, what), what);
  }

  async setConsumerTags(consumerId: string, tags: string[], what: string): Promise<void> {
    expectDone(await this.kong.PATCH('/consumers/{consumer_username_or_id}', { params: { path: { consumer_username_or_id: consumerId } }, body: { tags } }), what);
  }

  /** Kong deletes the consumer's credentials and plugins with it. */
  async deleteConsumer(consumerId: string, what: string): Promise<void> {
    expectDone(await this.kong.DELETE('/consumers/{consumer_username_or_id}', { params: { path: { consumer_username_or_id: consumerId } } }), what);
  }

  /** The consumer's plugins (one page: a consumer has a handful). */
  async consumerPlugins(consumerId: string, what = 'reading the consumer plugins'): Promise<Plugin[]> {
    const result = await this.kong.GET('/consumers/{consumer_username_or_id}/plugins', { params: { path: { consumer_username_or_id: consumerId } } });
    return pageFrom(expectBody(result, what), pluginFrom, what).data;
  }

  async *listPlugins({ tags, size }: ListQuery, what: string): AsyncGenerator<Plugin> {
    yield* pages((offset) =>
      this.kong
        .GET('/plugins', { params: { query: { tags, offset, size } } })
        .then((result): unknown => expectBody(result, what))
        .then((body) => pageFrom(body, pluginFrom, what)),
    );
  }

  async createConsumerPlugin(
    consumerId: string,
    body: { id?: string; name: string; config: Record<string, unknown>; tags: string[] },
    what: string,
  ): Promise<Plugin> {
    const result = await this.kong.POST('/consumers/{consumer_username_or_id}/plugins', { params: { path: { consumer_username_or_id: consumerId } }, body });
    return pluginFrom(expectBody(result, what), what);
  }

  async updatePlugin(pluginId: string, body: { config: Record<string, unknown>; tags: string[] }, what: string): Promise<void> {
    expectDone(await this.kong.PATCH('/plugins/{plugin_id}', { params: { path: { plugin_id: pluginId } }, body }), what);
  }

  async deletePlugin(pluginId: string, what: string): Promise<void> {
    expectDone(await this.kong.DELETE('/plugins/{plugin_id}', { params: { path: { plugin_id: pluginId } } }), what);
  }

  /** Puts the consumer in `group`; a PUT, so a member already is left one (kong/plugins/acl/api.lua). */
  async putInGroup(consumerId: string, group: string, tags: string[], what: string): Promise<void> {
    const result = await this.kong.PUT('/consumers/{consumer_username_or_id}/acls/{group_or_id}', {
      params: { path: { consumer_username_or_id: consumerId, group_or_id: group } },
      body: { tags },
    });
    expectDone(result, what);
  }

  async *groups(consumerId: string, what = "listing the consumer's ACL groups"): AsyncGenerator<Acl> {
    yield* pages((offset) =>
      this.kong
        .GET('/consumers/{consumer_username_or_id}/acls', { params: { path: { consumer_username_or_id: consumerId }, query: { offset } } })
        .then((result) => pageFrom(expectBody(result, what), aclFrom, what)),
    );
  }

  async keys(consumerId: string, what = 'listing keys'): Promise<KeyAuthCredential[]> {
    const all: KeyAuthCredential[] = [];
    for await (const credential of pages((offset) =>
      this.kong
        .GET('/consumers/{consumer_username_or_id}/key-auth', { params: { path: { consumer_username_or_id: consumerId }, query: { offset } } })
        .then((result) => pageFrom(expectBody(result, what), credentialFrom, what)),
    )) {
      all.push(credential);
    }
    return all;
  }

  /** Adds a credential holding `credential.key` as is; Kong's messages are not shown (a 409 quotes the key). */
  async addKey(consumerId: string, credential: NewCredential, what: string): Promise<KeyAuthCredential> {
    const result = await this.kong.POST('/consumers/{consumer_username_or_id}/key-auth', {
      params: { path: { consumer_username_or_id: consumerId } },
      body: credential,
    });
    return credentialFrom(expectBody(result, what, true), what);
  }

  /** Changes a credential's ttl (seconds from now) and/or its tags (the whole list). */
  async updateKey(consumerId: string, credentialId: string, body: { ttl?: number; tags?: string[] }, what: string): Promise<void> {
    const result = await this.kong.PATCH('/consumers/{consumer_username_or_id}/key-auth/{credential_id_or_key}', {
      params: { path: { consumer_username_or_id: consumerId, credential_id_or_key: credentialId } },
      body,
    });
    expectDone(result, what);
  }

  async deleteKey(consumerId: string, credentialId: string, what: string): Promise<void> {
    const result = await this.kong.DELETE('/consumers/{consumer_username_or_id}/key-auth/{credential_id_or_key}', {
      params: { path: { consumer_username_or_id: consumerId, credential_id_or_key: credentialId } },
    });
    expectDone(result, what);
  }
}
