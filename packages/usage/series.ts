/**
 * The Prometheus series `consumers usage` and the dashboard read: Kong 3.9's prometheus plugin
 * (kong/plugins/prometheus/exporter.lua) and the edge plugin's own counters beside them. The data
 * plane must expose exactly these names and labels; deploy/grafana/dashboards/ uses the same ones
 * and test/deploy/dashboard.test.ts runs every expression of it.
 */
export const SERIES = {
  /** counter {service, route, code, source, workspace, consumer}: consumer = username with per_consumer, else "". */
  requests: 'kong_http_requests_total',
  /** counter {consumer}: bans started by the edge plugin. */
  bans: 'kong_animal_store_edge_bans_total',
  /**
   * counter {consumer}: requests refused while banned. Kong counts them too, as code 429 with
   * consumer "": the ban is checked before key-auth has identified anyone.
   */
  bannedRequests: 'kong_animal_store_edge_banned_requests_total',
  /** counter (no labels): bearer tokens refused for a bad checksum. */
  checksumFailures: 'kong_animal_store_edge_checksum_failures_total',
} as const;

/** Kong's labels on kong_http_requests_total that usage reads. */
export const LABELS = { consumer: 'consumer', code: 'code', service: 'service' } as const;

/**
 * Kong's `service` label is the service's name. Ours, in gateway/kong.yml, all start with this
 * (the lint holds it); on a shared Kong every other team's requests are in the same series, and
 * usage counts ours only: a consumer of ours that another team's authentication finds is not
 * using our API there (docs/shared-kong.md).
 */
const OUR_SERVICE_PREFIX = 'animal-store-';

export const isOurService = (service: string | undefined) =>
  service !== undefined && service.startsWith(OUR_SERVICE_PREFIX) && service.length > OUR_SERVICE_PREFIX.length;

/** The PromQL matcher of our services' series: `service=~"animal-store-.+"`. */
export const OUR_SERVICES_MATCHER = `${LABELS.service}=~"${OUR_SERVICE_PREFIX}.+"`;
