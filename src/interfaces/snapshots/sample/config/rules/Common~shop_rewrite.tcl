# Rewrites legacy catalogue links and pins old API clients to the legacy pool.
when HTTP_REQUEST {
    if { [matchclass [HTTP::uri] starts_with legacy_paths] } {
        HTTP::uri [string map {"/catalog/" "/catalogue/"} [HTTP::uri]]
    }
    if { [HTTP::header exists "X-Legacy-Client"] } {
        pool shop_legacy_pool
    }
}
