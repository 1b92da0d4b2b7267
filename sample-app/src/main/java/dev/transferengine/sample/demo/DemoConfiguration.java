package dev.transferengine.sample.demo;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.Role;
import dev.transferengine.sample.SampleProperties;
import dev.transferengine.sample.kv.DecodeNode;
import dev.transferengine.sample.kv.PrefillNode;

/** The {@code demo} role: a decode node on a second engine, and a loop that keeps the prefill node busy. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnRole(Role.DEMO)
class DemoConfiguration {

    @Bean
    DemoDecode demoDecode(final SampleProperties properties) {
        return new DemoDecode(properties.kv());
    }

    /** Closed by {@link DemoDecode}, which owns its engine. */
    @Bean(destroyMethod = "")
    DecodeNode decodeNode(final DemoDecode demoDecode) {
        return demoDecode.node();
    }

    @Bean
    DemoLoop demoLoop(final PrefillNode prefill, final SampleProperties properties, final Environment environment) {
        return new DemoLoop(prefill, properties.demo(), environment);
    }
}
