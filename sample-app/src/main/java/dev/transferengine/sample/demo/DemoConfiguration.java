package dev.transferengine.sample.demo;

import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.Role;
import dev.transferengine.sample.SampleProperties;
import dev.transferengine.sample.kv.PrefillNode;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/** The {@code demo} role's loop that keeps the prefill node busy; its decode node is in {@link DemoDecodeAutoConfiguration}. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnRole(Role.DEMO)
class DemoConfiguration {

    @Bean
    DemoLoop demoLoop(final PrefillNode prefill, final SampleProperties properties, final Environment environment) {
        return new DemoLoop(prefill, properties.demo(), environment);
    }
}
