package dev.transferengine.autoconfigure;

import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLContextSpi;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;

import org.jspecify.annotations.Nullable;

/**
 * An {@link SSLContext} that hands every new {@link SSLEngine} out of the context it currently holds, so that an SSL
 * bundle's {@code reload-on-update} reaches the engine: connections made after a reload present and check the new
 * certificates, established ones keep theirs until they close. Whether the peer must present a certificate (mutual
 * TLS) stays as it was at start-up.
 */
final class ReloadableSslContext extends SSLContext {

    private final Delegating spi;

    private ReloadableSslContext(final Delegating spi, final SSLContext initial) {
        super(spi, initial.getProvider(), initial.getProtocol());
        this.spi = spi;
    }

    /** A context that starts out as {@code initial}. */
    static ReloadableSslContext of(final SSLContext initial) {
        return new ReloadableSslContext(new Delegating(initial), initial);
    }

    /** New connections use {@code next} from now on. Any thread. */
    void reload(final SSLContext next) {
        spi.current.set(next);
    }

    /** Forwards each call to the current context. */
    private static final class Delegating extends SSLContextSpi {

        private final AtomicReference<SSLContext> current;

        Delegating(final SSLContext initial) {
            this.current = new AtomicReference<>(initial);
        }

        @Override
        protected void engineInit(
                final KeyManager @Nullable [] keys,
                final TrustManager @Nullable [] trust,
                final @Nullable SecureRandom random) {
            throw new UnsupportedOperationException("initialised from the SSL bundle; reload the bundle instead");
        }

        @Override
        protected SSLSocketFactory engineGetSocketFactory() {
            return current.get().getSocketFactory();
        }

        @Override
        protected SSLServerSocketFactory engineGetServerSocketFactory() {
            return current.get().getServerSocketFactory();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine() {
            return current.get().createSSLEngine();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine(final String host, final int port) {
            return current.get().createSSLEngine(host, port);
        }

        @Override
        protected SSLSessionContext engineGetServerSessionContext() {
            return current.get().getServerSessionContext();
        }

        @Override
        protected SSLSessionContext engineGetClientSessionContext() {
            return current.get().getClientSessionContext();
        }
    }
}
