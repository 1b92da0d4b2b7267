package dev.transferengine.sample.security;

import java.util.List;

import org.springframework.http.HttpHeaders;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.authority.SimpleGrantedAuthority;
import org.springframework.security.web.server.authentication.ServerAuthenticationConverter;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Reads {@code Authorization: Bearer <token>} and accepts the deployment's {@link ServiceToken}. A request without
 * the header stays anonymous (and is refused where a token is needed); one with a wrong token is refused at once.
 */
final class BearerTokenAuthentication implements ServerAuthenticationConverter, ReactiveAuthenticationManager {

    private static final String BEARER = "Bearer ";

    /** The one principal: a caller that knows the token is a peer of this deployment. */
    private static final String PEER = "peer";

    private final ServiceToken token;

    BearerTokenAuthentication(final ServiceToken token) {
        this.token = token;
    }

    @Override
    public Mono<Authentication> convert(final ServerWebExchange exchange) {
        final String header = exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return Mono.empty();
        }
        return Mono.just(UsernamePasswordAuthenticationToken.unauthenticated(
                PEER, header.substring(BEARER.length()).strip()));
    }

    @Override
    public Mono<Authentication> authenticate(final Authentication presented) {
        if (!(presented.getCredentials() instanceof String candidate) || !token.matches(candidate)) {
            return Mono.error(new BadCredentialsException("wrong bearer token"));
        }
        return Mono.just(UsernamePasswordAuthenticationToken.authenticated(
                PEER, null, List.of(new SimpleGrantedAuthority("ROLE_PEER"))));
    }
}
