package dev.transferengine.sample.weights;

import java.util.List;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.Role;

/** The trainer's HTTP API: {@code POST /weights/push?inference=http://a:8080,http://b:8080}. */
@RestController
@ConditionalOnRole(Role.TRAINER)
class TrainerController {

    private final TrainerNode trainer;

    TrainerController(final TrainerNode trainer) {
        this.trainer = trainer;
    }

    @PostMapping("/weights/push")
    Mono<PushReport> push(@RequestParam final List<String> inference) {
        return trainer.push(inference);
    }
}
