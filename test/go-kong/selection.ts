/**
 * Which of go-kong's integration tests judge the local gateway: every top-level test of the files
 * for the entities it runs, less the ones listed here, each with the reason. The judge checks that
 * this list and go-kong's files agree, so a test is never dropped without a line here.
 */
export const GO_KONG_FILES = [
  'service_service_test.go',
  'route_service_test.go',
  'consumer_service_test.go',
  'plugin_service_test.go',
  'key_auth_service_test.go',
  'acl_service_test.go',
  'certificate_service_test.go',
  'sni_service_test.go',
  'ca_certificate_service_test.go',
  'tag_service_test.go',
  'schema_service_test.go',
  'information_service_test.go',
  'listeners_test.go',
  'client_test.go',
] as const;

/**
 * Tests picked one by one from files that are mostly go-kong's own unit tests (no Kong needed):
 * each named here asks the gateway something.
 */
export const GO_KONG_PICKED: Readonly<Record<string, readonly string[]>> = {
  // What decK does with /schemas/*: fill defaults of routes, services, targets and upstreams from
  // the entity schemas, and align rate-limiting's deprecated redis_* fields (shorthand_fields).
  // The file's other tests run no request, or need Kong Enterprise or other plugins' schemas.
  'utils_test.go': [
    'TestFillRoutesDefaults',
    'TestFillServiceDefaults_pre_310',
    'TestFillTargetDefaults',
    'TestFillUpstreamsDefaults',
    'Test_ClearUnmatchingDeprecationsSimple',
  ],
};

const BASIC_AUTH = "creates basic-auth plugins: a bundled plugin the data plane does not implement, refused by name";
const ENTERPRISE = 'Kong Enterprise only: go-kong skips it on Kong OSS (RunWhenEnterprise)';
const DB_LESS = "DB-less Kong only (RunWhenDBMode \"off\"): the gateway's Admin API is a database-backed Kong's";

export const EXCLUDED: Readonly<Record<string, string>> = {
  // Configuration the local gateway refuses by design (gateway/local/README.md): the test's own
  // setup fails on the refusal, so the rest of the test cannot judge anything.
  TestServiceWithClientCert: "sets a service's client_certificate: client certificates to upstreams are not implemented, refused",
  TestRoutesRoute: 'creates a stream route (tcp, destinations; route_service_test.go:83): the data plane runs HTTP routes only (its snis cases before pass)',
  TestPluginsService: 'sets key-auth config.key_in_body: reading keys from bodies is not implemented, refused',
  TestPluginsWithInstanceNameService: 'sets key-auth config.key_in_body: reading keys from bodies is not implemented, refused',
  TestPluginListEndpoint: BASIC_AUTH,
  TestPluginListAllForEntityEndpoint: BASIC_AUTH,
  TestFillPluginDefaults: "reads basic-auth's schema: a bundled plugin the data plane does not implement",
  TestFillPluginDefaultsArbitraryMap: "reads http-log's schema: a bundled plugin the data plane does not implement",
  // Not about the gateway.
  TestBaseRootURL: "a unit test of the client's default URL: it needs KONG_ADMIN_URL unset, which the judge sets",
  // Tests go-kong itself skips on Kong OSS 3.9.3 with a database and the traditional_compatible router.
  TestServiceWithTLSSANs: ENTERPRISE,
  TestPluginWithOrdering: ENTERPRISE,
  TestPluginsWithConsumerGroup: ENTERPRISE,
  TestPluginsWithPartialLinks: ENTERPRISE,
  TestPluginsWithConditionalExpressions: ENTERPRISE,
  TestTestWorkspace: ENTERPRISE,
  TestPluginsWithAIModels: 'Kong AI Gateway only: go-kong skips it elsewhere (RunWhenAIGateway)',
  TestCreateExpressionRoutes: 'the expressions router flavor only: Kong 3.9 and the gateway run traditional_compatible',
  TestRoutesValidationExpressions: 'the expressions router flavor only: Kong 3.9 and the gateway run traditional_compatible',
  TestTagDoesNotExists: 'Kong before 1.1 only (RunWhenKong "<1.1.0")',
  TestKongConfig: DB_LESS,
  TestReloadDeclarativeRawConfig: DB_LESS,
  TestReloadDeclarativeRawConfig_NetworkErrorDoesntReturnAPIError: DB_LESS,
};
