package dev.transferengine.sample.weights;

import dev.transferengine.reactive.ReactiveTransferEngine;
import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.Role;
import dev.transferengine.sample.SampleProperties;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.client.WebClient;

/** The weight-push nodes on the starter's engine. */
@Configuration(proxyBeanMethods = false)
class WeightsConfiguration {

    @Bean
    @ConditionalOnRole(Role.TRAINER)
    TrainerNode trainerNode(
            final ReactiveTransferEngine engine, final SampleProperties properties, final WebClient.Builder web) {
        return new TrainerNode(engine, TensorLayout.of(properties.weights()), new InferenceClient(web.build()));
    }

    @Bean
    @ConditionalOnRole(Role.INFERENCE)
    InferenceNode inferenceNode(final ReactiveTransferEngine engine, final SampleProperties properties) {
        return new InferenceNode(
                engine,
                TensorLayout.of(properties.weights()),
                properties.weights().receiveTimeout());
    }
}
