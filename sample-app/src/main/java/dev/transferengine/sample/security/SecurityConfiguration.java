package dev.transferengine.sample.security;

import dev.transferengine.sample.Role;
import dev.transferengine.sample.SampleProperties;

import org.springframework.boot.security.autoconfigure.actuate.web.reactive.EndpointRequest;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.SecurityWebFiltersOrder;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.authentication.AuthenticationWebFilter;
import org.springframework.security.web.server.authentication.HttpStatusServerEntryPoint;
import org.springframework.security.web.server.authentication.ServerAuthenticationEntryPointFailureHandler;
import org.springframework.security.web.server.context.NoOpServerSecurityContextRepository;
import org.springframework.security.web.server.savedrequest.NoOpServerRequestCache;

/**
 * Spring Security on the HTTP API and the actuator: every request needs the deployment's bearer token, except the
 * actuator endpoints named in {@code sample.security.open-endpoints} (default: health, for probes) and, where
 * {@code sample.security.open-dashboard} (default: in the demo role only), the dashboard. No sessions, no cookies:
 * a browser never sends the token on its own, so there is nothing for CSRF to forge.
 */
@Configuration(proxyBeanMethods = false)
@EnableWebFluxSecurity
class SecurityConfiguration {

    private static final String[] DASHBOARD = {
        "/", "/index.html", "/dashboard.js", "/dashboard.css", "/dashboard/events", "/dashboard/history"
    };

    @Bean
    ServiceToken serviceToken(final SampleProperties properties) {
        return ServiceToken.of(properties);
    }

    /** Also a bean so that Spring Boot does not make a user with a generated password. */
    @Bean
    BearerTokenAuthentication bearerTokenAuthentication(final ServiceToken token) {
        return new BearerTokenAuthentication(token);
    }

    @Bean
    SecurityWebFilterChain securityWebFilterChain(
            final ServerHttpSecurity http, final BearerTokenAuthentication bearer, final SampleProperties properties) {
        final HttpStatusServerEntryPoint unauthorized = new HttpStatusServerEntryPoint(HttpStatus.UNAUTHORIZED);
        final AuthenticationWebFilter authentication = new AuthenticationWebFilter(bearer);
        authentication.setServerAuthenticationConverter(bearer);
        authentication.setAuthenticationFailureHandler(new ServerAuthenticationEntryPointFailureHandler(unauthorized));
        final Boolean openDashboard = properties.security().openDashboard();
        final boolean dashboardOpen = openDashboard == null ? properties.role() == Role.DEMO : openDashboard;
        return http.authorizeExchange(exchanges -> {
                    exchanges
                            .matchers(EndpointRequest.to(
                                    properties.security().openEndpoints().toArray(String[]::new)))
                            .permitAll();
                    if (dashboardOpen) {
                        exchanges.pathMatchers(DASHBOARD).permitAll();
                    }
                    exchanges.anyExchange().authenticated();
                })
                .addFilterAt(authentication, SecurityWebFiltersOrder.AUTHENTICATION)
                .securityContextRepository(NoOpServerSecurityContextRepository.getInstance())
                .requestCache(cache -> cache.requestCache(NoOpServerRequestCache.getInstance()))
                .exceptionHandling(exceptions -> exceptions.authenticationEntryPoint(unauthorized))
                .httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .logout(ServerHttpSecurity.LogoutSpec::disable)
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .build();
    }

    /** The peer clients (prefill to decode, trainer to inference) present the token; they only call named peers. */
    @Bean
    WebClientCustomizer peerToken(final ServiceToken token) {
        return builder -> builder.defaultHeaders(headers -> headers.setBearerAuth(token.value()));
    }
}
