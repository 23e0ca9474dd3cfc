/** Where the gateway routes the portal (gateway/kong.yml's animal-store-portal route, strip_path false): every path starts here. */
export const BASE = '/portal';
