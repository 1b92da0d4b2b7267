package dev.transferengine.sample.weights;

import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.Role;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** An inference node's HTTP API: its buffer's descriptor, push notices, and verification. */
@RestController
@RequestMapping("/weights")
@ConditionalOnRole(Role.INFERENCE)
class InferenceController {

    private final InferenceNode inference;

    InferenceController(final InferenceNode inference) {
        this.inference = inference;
    }

    @GetMapping("/descriptor")
    WeightsDescriptor descriptor() {
        return inference.descriptor();
    }

    @PostMapping("/expect")
    @ResponseStatus(HttpStatus.NO_CONTENT)
    void expect(@RequestBody final WeightsExpectation expectation) {
        inference.expect(expectation);
    }

    @GetMapping("/verification")
    Mono<InferenceReceipt> verification(@RequestParam final long version) {
        return inference.verification(version);
    }
}
