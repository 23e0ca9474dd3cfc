-- kong.runloop.certificate: the certificate a TLS handshake gets, by the server name the client
-- sent (kong/runloop/certificate.lua, 3.9.3). The SNIs of the snapshot are looked up as Kong looks
-- them up: the exact name, then `*.` + its parent (a.b.c → *.b.c), then its last label as `*`
-- (a.b → a.*), then the SNI "*"; none, or no name sent: the listener's default certificates
-- (KONG_SSL_CERT or <prefix>/ssl/kong-default*), which nginx already serves.
--
-- Certificates are parsed on first use and kept with the index, so once per snapshot.
local ngx_ssl = require "ngx.ssl"

local ngx = ngx
local log = ngx.log
local ERR = ngx.ERR
local ngx_exit = ngx.exit
local NGX_ERROR = ngx.ERROR
local re_sub = ngx.re.sub
local find = string.find
local ipairs = ipairs
local type = type
local error = error
local server_name = ngx_ssl.server_name
local clear_certs = ngx_ssl.clear_certs
local parse_pem_cert = ngx_ssl.parse_pem_cert
local parse_pem_priv_key = ngx_ssl.parse_pem_priv_key
local set_cert = ngx_ssl.set_cert
local set_priv_key = ngx_ssl.set_priv_key

local DEFAULT_SNI = "*"

local certificate = {}

--- The SNIs of a checked snapshot, by name, each with its certificate row.
function certificate.build(snapshot)
  local certificates = {}
  for _, row in ipairs(snapshot.certificates) do
    certificates[row.id] = row
  end
  local by_name = {}
  for _, sni in ipairs(snapshot.snis) do
    by_name[sni.name] = certificates[sni.certificate.id]
  end
  return { by_name = by_name, parsed = {} }
end

--- produce_wild_snis: the wildcard names that may hold a certificate for `sni`.
local function wild_snis(sni)
  if type(sni) ~= "string" then
    error("sni must be a string", 2)
  end
  local prefix, suffix
  local wild = find(sni, "*", nil, true)
  if wild == 1 then
    prefix = sni
  elseif not wild then
    local name, n = re_sub(sni, [[([^.]+)(\.[^.]+\.\S+)]], "*$2", "ajo")
    if n and n > 0 then
      prefix = name
    end
  end
  if wild == #sni then
    suffix = sni
  elseif not wild then
    local name, n = re_sub(sni, [[([^.]+\.)([^.]+)$]], "$1*", "jo")
    if n and n > 0 then
      suffix = name
    end
  end
  return prefix, suffix
end

certificate.produce_wild_snis = wild_snis

--- The certificate row for a server name; nil: the default certificates.
function certificate.find(index, sni)
  if not sni then
    return nil
  end
  local by_name = index.by_name
  local row = by_name[sni]
  if row then
    return row
  end
  local prefix, suffix = wild_snis(sni)
  return (prefix and by_name[prefix]) or (suffix and by_name[suffix]) or by_name[DEFAULT_SNI]
end

--- The row's PEMs parsed for ngx.ssl, once per index; nil and the reason when one does not parse.
local function parsed(index, row)
  local done = index.parsed[row.id]
  if done then
    return done
  end
  local cert, err = parse_pem_cert(row.cert)
  if not cert then
    return nil, "could not parse PEM certificate: " .. err
  end
  local key
  key, err = parse_pem_priv_key(row.key)
  if not key then
    return nil, "could not parse PEM private key: " .. err
  end
  local result = { cert = cert, key = key }
  if row.cert_alt and row.key_alt then
    result.cert_alt, err = parse_pem_cert(row.cert_alt)
    if not result.cert_alt then
      return nil, "could not parse alternate PEM certificate: " .. err
    end
    result.key_alt, err = parse_pem_priv_key(row.key_alt)
    if not result.key_alt then
      return nil, "could not parse alternate PEM private key: " .. err
    end
  end
  index.parsed[row.id] = result
  return result
end

--- ssl_certificate_by_lua: serves the certificate of the client's server name, or leaves the
-- default ones. A certificate that cannot be set fails the handshake, as Kong's does.
function certificate.execute(index)
  local sni, err = server_name()
  if err then
    log(ERR, "[ssl] could not retrieve SNI: ", err)
    return ngx_exit(NGX_ERROR)
  end

  local row = certificate.find(index, sni)
  if not row then
    return
  end

  local pair
  pair, err = parsed(index, row)
  if not pair then
    log(ERR, "[ssl] certificate ", row.id, ": ", err)
    return ngx_exit(NGX_ERROR)
  end

  local ok
  ok, err = clear_certs()
  if not ok then
    log(ERR, "[ssl] could not clear existing (default) certificates: ", err)
    return ngx_exit(NGX_ERROR)
  end
  ok, err = set_cert(pair.cert)
  if ok then
    ok, err = set_priv_key(pair.key)
  end
  if ok and pair.cert_alt then
    ok, err = set_cert(pair.cert_alt)
    if ok then
      ok, err = set_priv_key(pair.key_alt)
    end
  end
  if not ok then
    log(ERR, "[ssl] could not set the certificate ", row.id, ": ", err)
    return ngx_exit(NGX_ERROR)
  end
end

return certificate
